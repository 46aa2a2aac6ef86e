// The turn's span (`invoke_agent`) and what hangs off it. A turn runs in the session driver, not
// in the RPC that submitted its input, so its parent travels with the input: the submitting span's
// traceparent is stored in the input's payload, or beside it in the input record for a payload
// the client wrote (QueueService.SubmitInput). The first input's submitter is the parent; every
// other input the turn consumes (queued ones claimed with it, steers admitted at its checkpoints)
// is a link to its submitter. A turn resumed after a park (on any replica) is a new span under
// the same parent, linked to the span of its earlier part, whose traceparent the parked progress
// keeps. With tracing off every step here is the identity.
import type { ModelProvider } from "../../ports/model-provider.js";
import type { ToolExecutor } from "../../ports/tool-executor.js";
import type { TraceAttributes, TraceSpan, Tracer } from "../../ports/tracer.js";
import type { RuntimeDeps } from "../deps.js";
import {
  traceProvider,
  traceTools,
  type OpenSpans,
  type ToolTraceContext,
} from "../observation/index.js";
import type { DecodedInput } from "./input-payload.js";
import { GEN_AI, providerNameOf, TETHER, TURN_EVENTS } from "../observation/index.js";
import type { TurnEnd } from "./turn-end.js";
import { turnIdOf, type DecodedWork, type TurnWork } from "./turn-preparation.js";

export interface TurnTrace {
  /** The turn span's traceparent (kept in the parked progress); undefined when off. */
  readonly traceparent: string | undefined;
  /** The turn's park (an event on its span): the fence it parked under, the calls it waits on. */
  parked(fencingToken: number, waitingOn: readonly string[]): void;
  /** The turn's commit (an event on its span). */
  committed(headRevision: number): void;
  /** Steered input admitted at a checkpoint: its submitters become links of the turn's span. */
  admitted(inputs: readonly DecodedInput[]): void;
  /** The provider whose calls are `chat` spans under the turn. */
  provider(provider: ModelProvider): ModelProvider;
  /** The executor whose calls are `execute_tool` spans under the turn. */
  tools(executor: ToolExecutor, turn: ToolTraceContext): ToolExecutor;
  /** Runs the turn, and ends its span (and any call span left open) with the turn's end. */
  around(work: () => Promise<TurnEnd>): Promise<TurnEnd>;
}

export const untracedTurn: TurnTrace = {
  traceparent: undefined,
  parked: () => undefined,
  committed: () => undefined,
  admitted: () => undefined,
  provider: (provider) => provider,
  tools: (executor) => executor,
  around: (work) => work(),
};

/**
 * The submitting requests' traceparents, in the inputs' order (inputs without one left out): the
 * payload's (StreamTurn, SendInput), else the record's (QueueService.SubmitInput, whose payload
 * is the client's own).
 */
function submittersOf(inputs: readonly DecodedInput[]): string[] {
  return inputs.flatMap(({ input, payload }) => {
    const trace = payload.trace ?? input.trace;
    return trace === undefined ? [] : [trace];
  });
}

/**
 * Where the turn's span hangs: the first input's submitting request; links to the other inputs'
 * submitters, and for a resumed turn to its earlier part.
 */
function originsOf(decoded: DecodedWork): { parent?: string; links?: string[] } {
  const [parent, ...others] = submittersOf(decoded.inputs);
  // A progress this version cannot read (decoded.unreadable) fails the turn later, where it is
  // reported.
  const earlier = decoded.saved?.trace;
  const links = [...new Set([...(earlier === undefined ? [] : [earlier]), ...others])];
  return {
    ...(parent !== undefined && { parent }),
    ...(links.length > 0 && { links }),
  };
}

function endAttributes(end: TurnEnd): TraceAttributes {
  const outcome = end.kind === "finished" ? `${end.outcome.kind}.${end.outcome.reason}` : end.kind;
  return {
    [TETHER.turnEnd]: end.kind,
    [TETHER.outcome]: outcome,
    ...("headRevision" in end && { [TETHER.headRevision]: end.headRevision }),
  };
}

function endTurnSpan(span: TraceSpan, end: TurnEnd): void {
  span.setAttributes(endAttributes(end));
  if (end.kind === "failed" || end.kind === "commit_unknown") span.fail(end.cause);
  if (end.kind === "finished" && end.outcome.kind === "failed") {
    span.fail(new Error(end.outcome.message), end.outcome.reason);
  }
}

export function startTurnTrace(deps: RuntimeDeps, job: TurnWork, decoded: DecodedWork): TurnTrace {
  const tracer = deps.tracer;
  if (tracer === undefined) return untracedTurn;
  const { fence } = job;
  const span = tracer.startSpan("invoke_agent", {
    kind: "internal",
    ...originsOf(decoded),
    attributes: {
      [GEN_AI.operationName]: "invoke_agent",
      [GEN_AI.providerName]: providerNameOf(deps.provider.name),
      [GEN_AI.conversationId]: fence.sessionId,
      [TETHER.turnId]: turnIdOf(job),
      [TETHER.fencingToken]: fence.fencingToken,
      [TETHER.resumed]: job.resumed !== undefined,
    },
  });
  span.addEvent(TURN_EVENTS.leaseClaimed, {
    [TETHER.fencingToken]: fence.fencingToken,
    [TETHER.leaseOwner]: fence.owner.ownerId,
  });
  return tracedTurn(tracer, span);
}

function tracedTurn(tracer: Tracer, span: TraceSpan): TurnTrace {
  const open: OpenSpans = new Map();
  return {
    traceparent: span.traceparent,
    parked: (fencingToken, waitingOn) =>
      span.addEvent(TURN_EVENTS.parked, {
        [TETHER.fencingToken]: fencingToken,
        [TETHER.waitingOn]: waitingOn,
      }),
    committed: (headRevision) =>
      span.addEvent(TURN_EVENTS.committed, { [TETHER.headRevision]: headRevision }),
    admitted: (inputs) => span.addLinks(submittersOf(inputs)),
    provider: (provider) => traceProvider(tracer, provider, open, span),
    tools: (executor, turn) => traceTools(tracer, executor, turn, open, span),
    async around(work) {
      let end: TurnEnd | undefined;
      try {
        end = await work();
        return end;
      } catch (error) {
        // Only a defect is thrown (a turn ends by returning its TurnEnd): the span says so.
        span.fail(error);
        throw error;
      } finally {
        for (const [call, unretried] of open) {
          if (unretried !== undefined) call.fail(unretried);
          call.setAttributes({ [TETHER.turnEnd]: end?.kind ?? "defect" });
          call.end();
        }
        if (end) endTurnSpan(span, end);
        span.end();
      }
    },
  };
}
