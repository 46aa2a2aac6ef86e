// The fault suite's clients: each submits inputs with StreamTurn to a random replica and follows
// the turn that consumes its input to turn_completed. On any stream error it retries, bounded in
// attempts and time: it resubmits with the same client_request_id (the server follows the same
// input) or, once it knows its turn, resumes with WatchSession from its last cursor elsewhere.
// Some inputs ask for a client tool (`/tool lookup`), half of those with approval: the client
// answers late (the turn parks meanwhile), through a random replica, and keeps what was accepted.
// Readers poll GetSession meanwhile. Every call goes into the history (history/record.ts) that
// history/check.ts judges at the end. The first `doorClients` clients submit through the OpenAI
// Agents API front door instead (door-clients.ts), on the same sessions.
import { randomUUID } from "node:crypto";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import type { TurnEvent } from "../../src/gen/tether/v1/turn_pb.js";
import {
  createHistoryRecorder,
  type HistoryEvent,
  type HistoryRecorder,
  type OperationHandle,
} from "./history/record.js";
import { createDoorClients } from "./door-clients.js";
import { readSession, sessionClient } from "./readback.js";
import { sleep } from "../support/wait-for.js";

export interface InputRecord {
  sessionId: string;
  requestId: string;
  /** Unique text the committed user message must carry. */
  token: string;
  /** The client saw at least one event of a stream for this request (input_queued or turn_started naming its input). */
  acknowledged: boolean;
  inputId?: string;
  turnId?: string;
  /** Saw turn_completed of its turn (through the door: the end of the turn carrying its token). */
  completed: boolean;
  /** Submitted through the front door (POST …/events); its acknowledgement is the 202. */
  door?: true;
  headRevision?: number;
  attempts: number;
  resumedByCursor: number;
  resubmitted: number;
  errors: Record<string, number>;
  /** The last error message per code, for the report. */
  messages: Record<string, string>;
  /** A tool input: its call waits for the client (and, with approval, for a decision first). */
  tool?: { approval: boolean };
  /** Results the server accepted, by call id (a decision leaves no result to check). */
  accepted: Record<string, string>;
}

export interface WorkloadOptions {
  addresses: string[];
  sessions: string[];
  clients: number;
  /** New inputs while this says so (until the faults are done); in-flight ones still finish. */
  submitting: () => boolean;
  /** Hard stop for every input, whatever happens. */
  giveUpAt: () => number;
  random: () => number;
  /** Clients polling GetSession on random sessions and replicas while submitting. */
  readers: number;
  /** Of `clients`, how many submit through the front door (door-clients.ts). */
  doorClients: number;
}

export interface WorkloadReport {
  inputs: InputRecord[];
  operations: {
    streamTurn: number;
    watchSession: number;
    getSession: number;
    doorPost: number;
    doorStream: number;
  };
  history: HistoryEvent[];
}

/** Refusals that precede any effect; every other error leaves the outcome unknown. */
const DEFINITE = new Set([Code.InvalidArgument, Code.PermissionDenied, Code.Unauthenticated]);
const describe = (error: unknown): string =>
  error instanceof ConnectError ? `${Code[error.code]}: ${error.rawMessage}` : String(error);

/** The operations of one stream: its submission (StreamTurn) and the wait for its turn. */
interface History {
  submit?: OperationHandle;
  waiting?: OperationHandle;
  begin: () => OperationHandle;
}
/** One input in this many asks for a client tool. */
const TOOL_EVERY = 3;
const lookupTool = (approval: boolean) => ({
  name: "lookup",
  description: "answered by the fault suite's client",
  parametersJsonSchema: '{"type":"object"}',
  requiresApproval: approval,
});
/** A stream that says nothing for this long is presumed stuck behind a dead or paused replica. */
const IDLE_MS = 4_000;
const MAX_ATTEMPTS = 60;
/** How long one answer (SubmitToolResults, DecideToolCalls) may take before it is tried again. */
const ANSWER_TIMEOUT_MS = 5_000;

export async function runWorkload(options: WorkloadOptions): Promise<WorkloadReport> {
  const clients: Client<typeof TurnService>[] = options.addresses.map((baseUrl) =>
    createClient(TurnService, createGrpcTransport({ baseUrl })),
  );
  const pick = <T>(items: T[]): T => items[Math.floor(options.random() * items.length)] as T;
  const inputs: InputRecord[] = [];
  const operations = { streamTurn: 0, watchSession: 0, getSession: 0, doorPost: 0, doorStream: 0 };
  const recorder: HistoryRecorder = createHistoryRecorder();
  const submitThroughDoor = createDoorClients({ ...options, recorder, operations });
  const sessionClients = options.addresses.map(sessionClient);

  /**
   * Answers one wait of the input's turn, late and through random replicas, until the server
   * accepts or ignores it (an earlier attempt's answer was stored) or refuses it as the turn is
   * over (FAILED_PRECONDITION).
   */
  async function answer(input: InputRecord, turnId: string, callId: string, approval: boolean) {
    await sleep(300 + options.random() * 1_700);
    for (let attempt = 1; attempt <= 40 && Date.now() < options.giveUpAt(); attempt++) {
      const index = Math.floor(options.random() * clients.length);
      const client = clients[index] as Client<typeof TurnService>;
      const output = `answer-${input.token}-${attempt}`;
      const op = recorder.invoke({
        process: -1,
        kind: "answer",
        session: input.sessionId,
        token: input.token,
        via: options.addresses[index] ?? "",
      });
      const sent = Date.now();
      try {
        // A deadline per attempt, as any client sets: an answer call left hanging would
        // otherwise leave the turn parked for the rest of the run.
        const call = { timeoutMs: ANSWER_TIMEOUT_MS };
        const report = approval
          ? await client.decideToolCalls(
              {
                sessionId: input.sessionId,
                turnId,
                decisions: [{ callId, approve: true, reason: "fault suite" }],
              },
              call,
            )
          : await client.submitToolResults(
              { sessionId: input.sessionId, turnId, results: [{ callId, output, isError: false }] },
              call,
            );
        if (!approval && report.acceptedCallIds.includes(callId)) input.accepted[callId] = output;
        op.ok({ turnId });
        return;
      } catch (error) {
        const code = error instanceof ConnectError ? Code[error.code] : "other";
        // Refused as the turn is over: nothing was stored.
        if (code === "FailedPrecondition") return op.fail(describe(error));
        op.unknown(describe(error));
        // Open until the client's own deadline, past the server's request timeout (replicas.ts).
        const hung = code === "DeadlineExceeded" && Date.now() - sent >= ANSWER_TIMEOUT_MS;
        const kind = hung ? "answer hung" : `answer ${code}`;
        input.errors[kind] = (input.errors[kind] ?? 0) + 1;
        await sleep(200 + options.random() * 400);
      }
    }
  }

  /**
   * Reads one stream until our turn completes; returns normally only then. The stream's submit
   * operation (StreamTurn only) completes ok at the input's acknowledgement; the await operation
   * starts then (or at the call, for WatchSession) and completes ok at turn_completed.
   */
  async function follow(
    input: InputRecord,
    stream: AsyncIterable<{ event?: TurnEvent }>,
    state: { cursor: bigint; answering: Set<string> },
    abort: AbortController,
    track: History,
  ): Promise<void> {
    const ack = () => {
      track.submit?.ok({
        ...(input.inputId !== undefined && { inputId: input.inputId }),
        ...(input.turnId !== undefined && { turnId: input.turnId }),
      });
      track.waiting ??= track.begin();
    };
    let idle = setTimeout(() => abort.abort(new Error("idle stream")), IDLE_MS);
    try {
      for await (const message of stream) {
        clearTimeout(idle);
        idle = setTimeout(() => abort.abort(new Error("idle stream")), IDLE_MS);
        const event = message.event;
        if (!event) continue;
        const kind = event.event.case;
        if (kind === "inputQueued") {
          input.acknowledged = true;
          input.inputId = event.event.value.inputId;
          ack();
        } else if (kind === "turnStarted") {
          const ids = event.event.value.inputIds;
          if (input.inputId === undefined || ids.includes(input.inputId)) {
            // StreamTurn yields only turn_started of the turn consuming its input.
            if (input.inputId === undefined) input.inputId = ids[0];
            input.acknowledged = true;
            input.turnId = event.turnId;
            ack();
          }
        }
        if (event.turnId !== "" && event.turnId === input.turnId) {
          state.cursor = event.cursor;
          const wait =
            kind === "toolCallRequested" || kind === "toolApprovalRequested"
              ? event.event.value.callId
              : undefined;
          const key = `${kind}:${wait}`;
          if (wait !== undefined && !state.answering.has(key)) {
            state.answering.add(key);
            const turnId = event.turnId;
            void answer(input, turnId, wait, kind === "toolApprovalRequested");
          }
        }
        if (kind === "turnCompleted" && event.turnId === input.turnId) {
          input.completed = true;
          input.headRevision = Number(event.event.value.headRevision);
          ack();
          track.waiting?.ok({ turnId: event.turnId, headRevision: input.headRevision });
          return;
        }
      }
      throw new Error("stream ended before turn_completed");
    } finally {
      clearTimeout(idle);
    }
  }

  async function submit(sessionId: string, process: number): Promise<void> {
    const door = process < options.doorClients;
    const input: InputRecord = {
      sessionId,
      requestId: `req-${randomUUID()}`,
      token: `tok${randomUUID().replaceAll("-", "")}`,
      acknowledged: false,
      completed: false,
      attempts: 0,
      resumedByCursor: 0,
      resubmitted: 0,
      errors: {},
      messages: {},
      accepted: {},
      ...(door && { door: true }),
      // Door clients send plain messages (tools through the door are the door's own tests').
      ...(!door &&
        inputs.length % TOOL_EVERY === TOOL_EVERY - 1 && {
          tool: { approval: inputs.length % (2 * TOOL_EVERY) === TOOL_EVERY - 1 },
        }),
    };
    inputs.push(input);
    if (door) return submitThroughDoor(input, process);
    const state = { cursor: 0n, answering: new Set<string>() };
    const text = input.tool ? `/tool lookup {"token":"${input.token}"}` : `say ${input.token}`;
    let backoff = 100;
    // The attempt cap counts only attempts after the faults end: while they run, replicas the
    // harness stopped refuse connections, and on a starved machine (slow restarts) a client could
    // spend its 60 there and give up on a turn that then completes (issue 35). Time bounds both.
    let attemptsAfterFaults = 0;
    while (
      !input.completed &&
      attemptsAfterFaults < MAX_ATTEMPTS &&
      Date.now() < options.giveUpAt()
    ) {
      input.attempts++;
      if (!options.submitting()) attemptsAfterFaults++;
      const abort = new AbortController();
      // The give-up moves (far off while the faults run, then the end of the drain), and a timer
      // cannot take a far-off delay (past 2^31 - 1 ms it fires at once): polled instead.
      const giveUp = setInterval(() => {
        if (Date.now() >= options.giveUpAt()) abort.abort(new Error("give up"));
      }, 250);
      const index = Math.floor(options.random() * clients.length);
      const client = clients[index] as Client<typeof TurnService>;
      const at = {
        process,
        session: sessionId,
        token: input.token,
        via: options.addresses[index] ?? "",
      };
      const track: History = { begin: () => recorder.invoke({ ...at, kind: "await" }) };
      try {
        // Once the turn is known, half the retries resume by cursor instead of resubmitting.
        if (input.turnId !== undefined && input.attempts > 1 && options.random() < 0.5) {
          operations.watchSession++;
          input.resumedByCursor++;
          track.waiting = track.begin();
          await follow(
            input,
            client.watchSession(
              { sessionId, afterCursor: state.cursor, untilTurnCompleted: false },
              { signal: abort.signal },
            ),
            state,
            abort,
            track,
          );
        } else {
          operations.streamTurn++;
          if (input.attempts > 1) input.resubmitted++;
          track.submit = recorder.invoke({ ...at, kind: "submit", requestId: input.requestId });
          await follow(
            input,
            client.streamTurn(
              {
                sessionId,
                clientRequestId: input.requestId,
                input: [{ kind: { case: "text", value: text } }],
                ...(input.tool && { clientTools: [lookupTool(input.tool.approval)] }),
              },
              { signal: abort.signal },
            ),
            state,
            abort,
            track,
          );
        }
      } catch (error) {
        const definite = error instanceof ConnectError && DEFINITE.has(error.code);
        if (definite) track.submit?.fail(describe(error));
        else track.submit?.unknown(describe(error));
        track.waiting?.unknown(describe(error));
        const code = error instanceof ConnectError ? Code[error.code] : "other";
        input.errors[code] = (input.errors[code] ?? 0) + 1;
        input.messages[code] = error instanceof Error ? error.message : String(error);
        await sleep(backoff * (0.5 + options.random()));
        backoff = Math.min(1_500, backoff * 2);
      } finally {
        clearInterval(giveUp);
        abort.abort();
      }
    }
  }

  /** GetSession on random sessions and replicas, a few times a second per reader, while submitting. */
  async function read(process: number): Promise<void> {
    for (let i = 0; i < 100_000 && options.submitting(); i++) {
      const index = Math.floor(options.random() * sessionClients.length);
      const session = pick(options.sessions);
      operations.getSession++;
      const op = recorder.invoke({
        process,
        kind: "read",
        session,
        via: options.addresses[index] ?? "",
      });
      try {
        const client = sessionClients[index] as (typeof sessionClients)[number];
        op.ok(await readSession(client, session, AbortSignal.timeout(3_000)));
      } catch (error) {
        op.unknown(describe(error));
      }
      await sleep(100 + options.random() * 300);
    }
  }

  await Promise.all([
    ...Array.from({ length: options.clients }, async (_, process) => {
      for (let i = 0; i < 100_000 && options.submitting(); i++) {
        await submit(pick(options.sessions), process);
      }
    }),
    ...Array.from({ length: options.readers }, (_, i) => read(options.clients + i)),
  ]);
  return { inputs, operations, history: recorder.events };
}
