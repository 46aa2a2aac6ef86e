// Turns that park: a turn waiting only for a client's tool result or a person's approval stores
// its progress and releases its session; the answer lands on any replica, and a replica resumes
// the same turn without repeating a model call or a finished tool. Two replicas on one Redis, and
// one replica on memory, through the real gRPC services.
import { randomUUID } from "node:crypto";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import { TetherError } from "../../../src/domain/errors.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import {
  BusyStrategy,
  ResumeReason,
  StopReason,
  type TurnEvent,
} from "../../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import type { EventLog } from "../../../src/ports/event-log.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import type { ToolExecutor } from "../../../src/ports/tool-executor.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { silentLogger, type RuntimeLogger } from "../../../src/runtime/index.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

interface Counters {
  modelCalls: number;
  serverRuns: number;
}

/**
 * First call: asks for the tools named in the user's text ("use a,b"), each call id `<tool>-1`;
 * after the results: one text naming every tool message it read, in order.
 */
function planningProvider(counters: Counters): ModelProvider {
  return createScriptedProvider({
    script: (request) => {
      counters.modelCalls++;
      const last = request.messages.at(-1);
      if (last?.role === "tool") {
        const said = request.messages
          .flatMap((m) => (m.role === "tool" ? [`${m.toolName}=${m.content}`] : []))
          .join("; ");
        return { events: [{ type: "text_delta", text: `results: ${said}` }], response: {} };
      }
      const text =
        last?.role === "user" ? last.content.map((c) => (c.type === "text" ? c.text : "")) : [];
      const tools = /use ([\w,]+)/u.exec(text.join(" "))?.[1]?.split(",") ?? [];
      if (tools.length === 0) {
        return { events: [{ type: "text_delta", text: "plain answer" }], response: {} };
      }
      return {
        response: {
          parts: tools.map((t) => ({
            type: "tool_call" as const,
            callId: `${t}-1`,
            toolName: t,
            argumentsJson: '{"q":1}',
          })),
        },
      };
    },
  });
}

function serverTools(counters: Counters): ToolExecutor {
  return {
    definitions: () => [
      { name: "server_echo", description: "runs on the server", inputSchema: { type: "object" } },
    ],
    execute: () => {
      counters.serverRuns++;
      return Promise.resolve({ output: "echoed" });
    },
  };
}

const clientTool = (name: string, requiresApproval = false) => ({
  name,
  description: "answered by the client",
  parametersJsonSchema: '{"type":"object"}',
  requiresApproval,
});
const text = (value: string) => [{ kind: { case: "text" as const, value } }];

type Replica = {
  turns: Client<typeof TurnService>;
  sessions: Client<typeof SessionService>;
  close(): Promise<void>;
};

function setup(backend: "memory" | "redis") {
  const counters: Counters = { modelCalls: 0, serverRuns: 0 };
  const namespace = `parked-${randomUUID()}`;
  const open: Replica[] = [];
  async function replica(
    extra: {
      parkedTurnTtlMs?: number;
      maxParkedProgressBytes?: number;
      wrapLog?: (log: EventLog) => EventLog;
      logger?: RuntimeLogger;
    } = {},
  ): Promise<Replica> {
    const { runtime, store } = createRuntimeHarness({
      provider: planningProvider(counters),
      serverTools: serverTools(counters),
      clientToolTimeoutMs: 20_000,
      leaseTtlMs: 2_000,
      parkAfterMs: 0,
      // Each replica its own lease identity: one owner would re-enter another's lease.
      ownerId: `replica-${open.length}-${namespace}`,
      ...extra,
      namespace,
      ...(backend === "redis" ? { redis } : {}),
    });
    const server = await startApiServer({
      routes: (router) => {
        router.service(TurnService, createTurnService({ runtime }));
        router.service(SessionService, createSessionService({ store }));
      },
    });
    const r: Replica = {
      turns: createClient(TurnService, server.transport),
      sessions: createClient(SessionService, server.transport),
      close: async () => {
        await runtime.drain(1_000);
        await server.close();
      },
    };
    open.push(r);
    return r;
  }
  return { counters, replica, closeAll: () => Promise.all(open.map((r) => r.close())) };
}

/** Follows a stream in the background; `until` resolves at the first event matching `pred`. */
function follow(stream: AsyncIterable<{ event?: TurnEvent }>) {
  const events: TurnEvent[] = [];
  const waiters: { pred: (e: TurnEvent) => boolean; resolve: (e: TurnEvent) => void }[] = [];
  const done = (async () => {
    for await (const r of stream) {
      if (!r.event) continue;
      events.push(r.event);
      for (const w of [...waiters]) {
        if (w.pred(r.event)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(r.event);
        }
      }
    }
  })();
  const until = (pred: (e: TurnEvent) => boolean): Promise<TurnEvent> => {
    const seen = events.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => waiters.push({ pred, resolve }));
  };
  const kinds = () => events.map((e) => e.event.case);
  return { events, done, until, kinds };
}

const is =
  (kind: TurnEvent["event"]["case"]) =>
  (e: TurnEvent): boolean =>
    e.event.case === kind;

const completionText = (events: TurnEvent[]): string => {
  const done = events.find(is("turnCompleted"));
  if (done?.event.case !== "turnCompleted") return "";
  const outcome = done.event.value.outcome?.kind;
  return outcome?.case === "finished" ? outcome.value.value : "";
};

for (const backend of ["memory", "redis"] as const) {
  describe(`parked turns on ${backend}`, () => {
    let env: ReturnType<typeof setup> | undefined;
    afterEach(async () => {
      await env?.closeAll();
      env = undefined;
    });
    const two = async () => {
      env = setup(backend);
      const a = await env.replica();
      // Memory is one process: one replica answers. Redis: a second replica of the deployment.
      const b = backend === "redis" ? await env.replica() : a;
      return { a, b, counters: env.counters };
    };

    it("a client tool call parks; the answer on another replica resumes the same turn, no model call repeated", async () => {
      const { a, b, counters } = await two();
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use lookup"),
          clientTools: [clientTool("lookup")],
        }),
      );
      const parked = await stream.until(is("turnParked"));
      if (parked.event.case !== "turnParked") throw new Error("not parked");
      expect(parked.event.value.pendingCallIds).toEqual(["lookup-1"]);
      // turn_parked is in the log before the park's store step: the lease goes a moment later.
      await waitFor(
        async () => (await b.sessions.getSession({ sessionId })).session?.lease === undefined,
        { what: "the parked turn's lease to be released" },
      );
      const view = await b.sessions.getSession({ sessionId });
      expect(view.session?.parkedTurn).toMatchObject({
        turnId: parked.turnId,
        pendingCallIds: ["lookup-1"],
      });
      const report = await b.turns.submitToolResults({
        sessionId,
        turnId: parked.turnId,
        results: [{ callId: "lookup-1", output: "42", isError: false }],
      });
      expect(report.acceptedCallIds).toEqual(["lookup-1"]);
      await stream.done;
      const kinds = stream.kinds();
      expect(kinds.filter((k) => k === "turnStarted")).toHaveLength(1);
      expect(kinds.filter((k) => k === "toolCallRequested")).toHaveLength(1);
      const resumed = stream.events.find(is("turnResumed"));
      expect(resumed?.event.value).toMatchObject({ reason: ResumeReason.ANSWERED });
      expect(new Set(stream.events.map((e) => e.turnId))).toEqual(new Set([parked.turnId]));
      const cursors = stream.events.map((e) => e.cursor);
      expect([...cursors].sort((x, y) => (x < y ? -1 : 1))).toEqual(cursors);
      expect(completionText(stream.events)).toBe("results: lookup=42");
      expect(counters.modelCalls).toBe(2);
      const after = await a.sessions.getSession({ sessionId, includeMessages: true });
      expect(after.session?.parkedTurn).toBeUndefined();
      expect(after.session?.turnIndex).toBe(1n);
      // A late answer to the completed turn is refused, naming it.
      const late = await expectCode(
        a.turns.submitToolResults({
          sessionId,
          turnId: parked.turnId,
          results: [{ callId: "lookup-1", output: "again", isError: false }],
        }),
        Code.FailedPrecondition,
      );
      expect(late.rawMessage).toContain(parked.turnId);
    });

    it("a server tool that finished before the turn parked is not run again", async () => {
      const { a, b, counters } = await two();
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use server_echo,lookup"),
          clientTools: [clientTool("lookup")],
        }),
      );
      const parked = await stream.until(is("turnParked"));
      await b.turns.submitToolResults({
        sessionId,
        turnId: parked.turnId,
        results: [{ callId: "lookup-1", output: "7", isError: false }],
      });
      await stream.done;
      expect(counters.serverRuns).toBe(1);
      expect(counters.modelCalls).toBe(2);
      expect(completionText(stream.events)).toBe("results: server_echo=echoed; lookup=7");
      const finished = stream.events.filter(is("toolCallFinished"));
      expect(finished).toHaveLength(2);
    });

    it("a client tool that needs approval parks on the approval, then on the result", async () => {
      const { a, b, counters } = await two();
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use transfer"),
          clientTools: [clientTool("transfer", true)],
        }),
      );
      const asked = await stream.until(is("toolApprovalRequested"));
      expect(asked.event.value).toMatchObject({ callId: "transfer-1", name: "transfer" });
      const parked = await stream.until(is("turnParked"));
      expect(parked.event.value).toMatchObject({ approvalCallIds: ["transfer-1"] });
      expect(stream.events.some(is("toolCallRequested"))).toBe(false);
      // A result before the approval is not what the turn waits for.
      const early = await b.turns.submitToolResults({
        sessionId,
        turnId: parked.turnId,
        results: [{ callId: "transfer-1", output: "too early", isError: false }],
      });
      expect(early.ignoredCallIds).toEqual(["transfer-1"]);
      const decided = await b.turns.decideToolCalls({
        sessionId,
        turnId: parked.turnId,
        decisions: [{ callId: "transfer-1", approve: true, reason: "ok" }],
      });
      expect(decided).toMatchObject({ acceptedCallIds: ["transfer-1"], ignoredCallIds: [] });
      const again = await b.turns.decideToolCalls({
        sessionId,
        turnId: parked.turnId,
        decisions: [{ callId: "transfer-1", approve: false, reason: "changed my mind" }],
      });
      expect(again.ignoredCallIds).toEqual(["transfer-1"]);
      await stream.until(is("toolCallRequested"));
      await stream.until((e) => e.event.case === "turnParked" && e !== parked);
      await a.turns.submitToolResults({
        sessionId,
        turnId: parked.turnId,
        results: [{ callId: "transfer-1", output: "sent", isError: false }],
      });
      await stream.done;
      expect(completionText(stream.events)).toBe("results: transfer=sent");
      expect(counters.modelCalls).toBe(2);
      expect(stream.events.filter(is("turnResumed"))).toHaveLength(2);
    });

    it("an approved client call whose request never reached the log is shown by the next run", async () => {
      env = setup(backend);
      // The run that resumes on the approval records the call's wait, then its request fails
      // to reach the log (a Redis restart, or the replica dying in between): the turn stops
      // short, and the run after it must show the request, or nobody could answer it.
      let dropped = 0;
      const a = await env.replica({
        wrapLog: (log) => ({
          ...log,
          append(sessionId, entries, fence) {
            if (dropped === 0 && entries.some((e) => e.event.type === "tool_call_requested")) {
              dropped++;
              return Promise.reject(
                new TetherError("store_unavailable", "store unavailable: test"),
              );
            }
            return log.append(sessionId, entries, fence);
          },
        }),
      });
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use transfer"),
          clientTools: [clientTool("transfer", true)],
        }),
      );
      const parked = await stream.until(is("turnParked"));
      await a.turns.decideToolCalls({
        sessionId,
        turnId: parked.turnId,
        decisions: [{ callId: "transfer-1", approve: true, reason: "ok" }],
      });
      const requested = await stream.until(is("toolCallRequested"));
      expect(dropped).toBe(1);
      expect(requested.event.value).toMatchObject({ callId: "transfer-1" });
      await a.turns.submitToolResults({
        sessionId,
        turnId: parked.turnId,
        results: [{ callId: "transfer-1", output: "sent", isError: false }],
      });
      await stream.done;
      expect(completionText(stream.events)).toBe("results: transfer=sent");
      expect(stream.events.filter(is("toolCallRequested"))).toHaveLength(1);
      expect(env.counters.modelCalls).toBe(2);
    });

    it("a denied call gives the model an error result carrying the reason; server tools can need approval", async () => {
      env = setup(backend);
      const a = await env.replica();
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use server_echo"),
          options: { approvalRequiredTools: ["server_echo"] },
        }),
      );
      const parked = await stream.until(is("turnParked"));
      expect(stream.events.some(is("toolCallStarted"))).toBe(false);
      await a.turns.decideToolCalls({
        sessionId,
        turnId: parked.turnId,
        decisions: [{ callId: "server_echo-1", approve: false, reason: "not today" }],
      });
      await stream.done;
      expect(env.counters.serverRuns).toBe(0);
      expect(completionText(stream.events)).toContain("denied (not today)");
    });

    it("CancelTurn ends a parked turn: committed once, answered calls keep their results", async () => {
      const { a, b } = await two();
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use first,second"),
          clientTools: [clientTool("first"), clientTool("second")],
        }),
      );
      const parked = await stream.until(is("turnParked"));
      await b.turns.submitToolResults({
        sessionId,
        turnId: parked.turnId,
        results: [{ callId: "first-1", output: "one", isError: false }],
      });
      const cancel = await b.turns.cancelTurn({ sessionId, turnId: parked.turnId });
      expect(cancel.cancelled).toBe(true);
      await stream.done;
      const done = stream.events.find(is("turnCompleted"));
      expect(done?.event.value).toMatchObject({
        outcome: { kind: { case: "stopped", value: { reason: StopReason.CANCELLED } } },
      });
      const view = await a.sessions.getSession({ sessionId, includeMessages: true });
      expect(view.session?.turnIndex).toBe(1n);
      const tools = view.messages.map((m) => JSON.parse(m) as { role: string; content?: unknown });
      const results = tools.filter((m) => m.role === "tool");
      expect(results).toMatchObject([
        { callId: "first-1", content: "one", isError: false },
        { callId: "second-1", isError: true },
      ]);
    });

    it("enqueued input waits for the parked turn; steered input is admitted when it resumes", async () => {
      const { a, b } = await two();
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use lookup"),
          clientTools: [clientTool("lookup")],
        }),
      );
      const parked = await stream.until(is("turnParked"));
      const steered = follow(
        b.turns.streamTurn({
          sessionId,
          input: text("also this"),
          busyStrategy: BusyStrategy.STEER,
        }),
      );
      const queued = follow(
        b.turns.streamTurn({
          sessionId,
          input: text("next question"),
          busyStrategy: BusyStrategy.ENQUEUE,
        }),
      );
      await steered.until(is("inputQueued"));
      await queued.until(is("inputQueued"));
      expect(queued.events.some(is("turnStarted"))).toBe(false);
      await b.turns.submitToolResults({
        sessionId,
        turnId: parked.turnId,
        results: [{ callId: "lookup-1", output: "42", isError: false }],
      });
      await Promise.all([stream.done, steered.done, queued.done]);
      expect(steered.events.find(is("turnCompleted"))?.turnId).toBe(parked.turnId);
      expect(stream.events.some(is("inputAdmitted"))).toBe(true);
      const next = queued.events.find(is("turnCompleted"));
      expect(next?.turnId).not.toBe(parked.turnId);
      expect(completionText(queued.events)).toBe("plain answer");
    });

    it("interrupt cancels the parked turn and runs the new input; reject is refused", async () => {
      const { a, b } = await two();
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use lookup"),
          clientTools: [clientTool("lookup")],
        }),
      );
      await stream.until(is("turnParked"));
      await expectCode(
        (async () => {
          for await (const _ of b.turns.streamTurn({
            sessionId,
            input: text("now"),
            busyStrategy: BusyStrategy.REJECT,
          })) {
            // refused before any event
          }
        })(),
        Code.Aborted,
      );
      const interrupting = follow(
        b.turns.streamTurn({
          sessionId,
          input: text("forget it"),
          busyStrategy: BusyStrategy.INTERRUPT,
        }),
      );
      await Promise.all([stream.done, interrupting.done]);
      expect(stream.events.find(is("turnCompleted"))?.event.value).toMatchObject({
        outcome: { kind: { case: "stopped", value: { reason: StopReason.CANCELLED } } },
      });
      expect(completionText(interrupting.events)).toBe("plain answer");
    });

    it("a parked turn expires with its own stop reason", async () => {
      env = setup(backend);
      const a = await env.replica({ parkedTurnTtlMs: 300 });
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use lookup"),
          clientTools: [clientTool("lookup")],
        }),
      );
      await stream.done;
      expect(stream.events.find(is("turnResumed"))?.event.value).toMatchObject({
        reason: ResumeReason.EXPIRED,
      });
      expect(stream.events.find(is("turnCompleted"))?.event.value).toMatchObject({
        outcome: { kind: { case: "stopped", value: { reason: StopReason.PARK_EXPIRED } } },
      });
    });

    it("a turn too large to park keeps waiting on its replica and still takes its answer", async () => {
      env = setup(backend);
      const warnings: string[] = [];
      const logger = {
        ...silentLogger,
        warn: (_fields: object, message: string) => void warnings.push(message),
      };
      const a = await env.replica({ maxParkedProgressBytes: 16, logger });
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use lookup"),
          clientTools: [clientTool("lookup")],
        }),
      );
      const requested = await stream.until(is("toolCallRequested"));
      // It tried to park, was refused, and still holds its lease.
      await waitFor(() => warnings.includes("turn too large to park: it waits on this replica"), {
        what: "the refused park",
      });
      expect((await a.sessions.getSession({ sessionId })).session?.lease).toBeDefined();
      await a.turns.submitToolResults({
        sessionId,
        turnId: requested.turnId,
        results: [{ callId: "lookup-1", output: "kept", isError: false }],
      });
      await stream.done;
      expect(stream.events.some(is("turnParked"))).toBe(false);
      expect(completionText(stream.events)).toBe("results: lookup=kept");
    });

    it("bad decisions get typed errors naming the turn or the field", async () => {
      const { a } = await two();
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use lookup"),
          clientTools: [clientTool("lookup")],
        }),
      );
      const parked = await stream.until(is("turnParked"));
      const needsNone = await expectCode(
        a.turns.decideToolCalls({
          sessionId,
          turnId: parked.turnId,
          decisions: [{ callId: "lookup-1", approve: true, reason: "" }],
        }),
        Code.InvalidArgument,
      );
      expect(needsNone.message).toContain("decisions[0].call_id");
      const notRunning = await expectCode(
        a.turns.decideToolCalls({
          sessionId,
          turnId: "turn-that-never-was",
          decisions: [{ callId: "x", approve: true, reason: "" }],
        }),
        Code.FailedPrecondition,
      );
      expect(notRunning.message).toContain("turn-that-never-was");
      const unknown = await a.turns.decideToolCalls({
        sessionId,
        turnId: parked.turnId,
        decisions: [{ callId: "no-such-call", approve: true, reason: "" }],
      });
      expect(unknown.ignoredCallIds).toEqual(["no-such-call"]);
      await expectCode(
        a.turns.decideToolCalls({ sessionId, turnId: parked.turnId, decisions: [] }),
        Code.InvalidArgument,
      );
      await a.turns.cancelTurn({ sessionId });
      await stream.done;
    });
  });
}

describe("parked turns across a replica's death (redis)", () => {
  it("the replica that parked the turn is gone; another resumes it from the store", async () => {
    const env = setup("redis");
    try {
      const a = await env.replica();
      const b = await env.replica();
      const sessionId = `s-${randomUUID()}`;
      const stream = follow(
        a.turns.streamTurn({
          sessionId,
          input: text("use server_echo,lookup"),
          clientTools: [clientTool("lookup")],
        }),
      );
      const parked = await stream.until(is("turnParked"));
      await a.close();
      await stream.done.catch(() => undefined);
      const watch = follow(
        b.turns.watchSession({ sessionId, afterCursor: parked.cursor, untilTurnCompleted: true }),
      );
      await b.turns.submitToolResults({
        sessionId,
        turnId: parked.turnId,
        results: [{ callId: "lookup-1", output: "late", isError: false }],
      });
      await watch.done;
      expect(watch.kinds()[0]).toBe("turnResumed");
      expect(completionText(watch.events)).toBe("results: server_echo=echoed; lookup=late");
      expect(env.counters.modelCalls).toBe(2);
      expect(env.counters.serverRuns).toBe(1);
    } finally {
      await env.closeAll();
    }
  });
});
