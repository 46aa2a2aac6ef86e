// The fault suite's front-door clients (ADR 0037): some of the workload's clients submit through
// the OpenAI Agents API instead of StreamTurn, as the SDKs would. One input: the session's event
// stream opened on a random replica (GET …/events), then the message posted to a random replica
// (POST …/events, `Tether-Busy-Strategy: enqueue` as StreamTurn's default, an Idempotency-Key
// that every attempt for this input shares); acknowledged at the 202. Then the stream is read
// until the turn whose answer carries the input's token ends. Any error, a refusal of the post or
// a stream quiet for too long starts a new attempt on other replicas: the stream resumes with
// `?after=` from the last event it had (or from a place known to precede the input), and until a
// 202 came the message is posted again under the same key. The verdict counts these inputs as the
// gRPC clients' are (audit.ts): acknowledged once a 202 came, committed exactly once.
import type { InputRecord } from "./clients.js";
import type { HistoryRecorder, OperationHandle } from "./history/record.js";
import { sleep } from "../support/wait-for.js";

export interface DoorContext {
  addresses: string[];
  random: () => number;
  giveUpAt: () => number;
  submitting: () => boolean;
  recorder: HistoryRecorder;
  operations: { doorPost: number; doorStream: number };
}

/** Refusals that precede any effect; every other answer or error leaves the outcome unknown. */
const DEFINITE = new Set([400, 401, 403, 404, 422]);
const IDLE_MS = 4_000;
const POST_TIMEOUT_MS = 5_000;
const MAX_ATTEMPTS = 60;
const CURSOR_SCALE = 2 ** 20;
const TURN_END = /^agent\.session\.turn\.(completed|failed|cancelled|incomplete)$/u;

interface DoorEvent {
  type: string;
  event_id: string;
  turn_id?: string;
  delta?: string;
}

/** An event id at a log entry's own cursor (not a live text piece's partial one). */
function atEntry(eventId: string): boolean {
  const cursor = Number(/^evt_(\d+)/u.exec(eventId)?.[1]);
  return Number.isSafeInteger(cursor) && cursor % CURSOR_SCALE === 0;
}

/** The kind of an attempt's end, for the report's client errors. */
function doorErrorCode(error: unknown, signal: AbortSignal): string {
  if (error instanceof Refused) return `door ${error.status}`;
  if (error instanceof Unmade) return "door session made";
  if (signal.aborted) return `door ${String((signal.reason as Error | undefined)?.message)}`;
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
  return cause === undefined ? "door other" : `door ${cause}`;
}

class Unmade extends Error {}

class Refused extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`HTTP ${status}: ${body.slice(0, 200)}`);
  }
}

export function createDoorClients(ctx: DoorContext) {
  /**
   * Per session, the id of a turn's end some door client received: in the log before any message
   * posted after it was seen, so a stream resumed after it holds every later turn.
   */
  const seen = new Map<string, string>();
  const pickIndex = () => Math.floor(ctx.random() * ctx.addresses.length);

  async function post(base: string, input: InputRecord, text: string, signal: AbortSignal) {
    const response = await fetch(`${base}/v1/agents/sessions/${input.sessionId}/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "idempotency-key": input.requestId,
        "tether-busy-strategy": "enqueue",
      },
      body: JSON.stringify({
        events: [
          {
            type: "agent.session.input.message",
            input: [{ role: "user", content: [{ type: "input_text", text }] }],
          },
        ],
      }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(POST_TIMEOUT_MS)]),
    });
    const body = await response.text();
    if (response.status !== 202) throw new Refused(response.status, body);
  }

  /** Follows one input to the end of its turn; returns once it is there, throws otherwise. */
  async function attempt(
    input: InputRecord,
    state: { after: string | undefined; texts: Map<string, string>; acked: boolean },
    process: number,
    abort: AbortController,
  ): Promise<void> {
    const streamAt = pickIndex();
    const base = ctx.addresses[streamAt] ?? "";
    const query = state.after === undefined ? "" : `?after=${state.after}`;
    ctx.operations.doorStream++;
    const at = { process, session: input.sessionId, token: input.token };
    let waiting: OperationHandle | undefined = state.acked
      ? ctx.recorder.invoke({ ...at, kind: "await", via: base })
      : undefined;
    let submit: OperationHandle | undefined;
    try {
      const response = await fetch(`${base}/v1/agents/sessions/${input.sessionId}/events${query}`, {
        headers: { accept: "text/event-stream" },
        signal: abort.signal,
      });
      const opened = response.status === 200 && response.body !== null;
      // The session's first message makes it: before that its stream is a 404.
      const unmade = response.status === 404 && !state.acked;
      if (!opened && !unmade) throw new Refused(response.status, await response.text());
      if (!opened) await response.body?.cancel();
      if (!state.acked) {
        const postAt = pickIndex();
        const via = ctx.addresses[postAt] ?? "";
        ctx.operations.doorPost++;
        if (input.attempts > 1) input.resubmitted++;
        submit = ctx.recorder.invoke({ ...at, kind: "submit", requestId: input.requestId, via });
        await post(via, input, `say ${input.token}`, abort.signal);
        state.acked = true;
        input.acknowledged = true;
        submit.ok();
        waiting = ctx.recorder.invoke({ ...at, kind: "await", via: base });
      } else {
        input.resumedByCursor++;
      }
      if (!opened || !response.body) {
        throw new Unmade("the message made the session: its stream opens on the next attempt");
      }
      await readUntilDone(input, state, response.body, abort);
      waiting?.ok();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof Refused && DEFINITE.has(error.status)) submit?.fail(message);
      else submit?.unknown(message);
      waiting?.unknown(message);
      throw error;
    }
  }

  async function readUntilDone(
    input: InputRecord,
    state: { after: string | undefined; texts: Map<string, string> },
    body: ReadableStream<Uint8Array>,
    abort: AbortController,
  ): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let idle = setTimeout(() => abort.abort(new Error("idle stream")), IDLE_MS);
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error("stream ended before the turn did");
        clearTimeout(idle);
        idle = setTimeout(() => abort.abort(new Error("idle stream")), IDLE_MS);
        buffer += decoder.decode(chunk.value, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split("\n").find((line) => line.startsWith("data: "));
          if (data === undefined) continue;
          if (onEvent(input, state, JSON.parse(data.slice(6)) as DoorEvent)) return;
        }
      }
    } finally {
      clearTimeout(idle);
      void reader.cancel().catch(() => undefined);
    }
  }

  /** Takes one event in; true once the input's turn ended. */
  function onEvent(
    input: InputRecord,
    state: { after: string | undefined; texts: Map<string, string> },
    event: DoorEvent,
  ): boolean {
    // A resume from a live piece's partial cursor is the door's own test's business; here the
    // stream resumes from whole entries, and text seen twice only repeats the token.
    if (atEntry(event.event_id)) state.after = event.event_id;
    const turnId = event.turn_id ?? "";
    if (event.type === "agent.session.turn.created") state.texts.set(turnId, "");
    if (event.type === "agent.session.turn.output_text.delta") {
      state.texts.set(turnId, (state.texts.get(turnId) ?? "") + (event.delta ?? ""));
    }
    if (!TURN_END.test(event.type)) return false;
    seen.set(input.sessionId, event.event_id);
    const mine = state.texts.get(turnId)?.includes(input.token) === true;
    state.texts.delete(turnId);
    if (!mine) return false;
    input.turnId = turnId;
    input.completed = true;
    return true;
  }

  /** One input through the door, retried until its turn ended or the run gives up. */
  return async function submitThroughDoor(input: InputRecord, process: number): Promise<void> {
    // Live on the first attempt (as the SDK helpers open it); a resume starts no later than this.
    const state = {
      after: undefined as string | undefined,
      from: seen.get(input.sessionId) ?? "evt_0",
      texts: new Map<string, string>(),
      acked: false,
    };
    let backoff = 100;
    let attemptsAfterFaults = 0;
    while (!input.completed && attemptsAfterFaults < MAX_ATTEMPTS && Date.now() < ctx.giveUpAt()) {
      input.attempts++;
      if (!ctx.submitting()) attemptsAfterFaults++;
      const abort = new AbortController();
      const giveUp = setInterval(() => {
        if (Date.now() >= ctx.giveUpAt()) abort.abort(new Error("give up"));
      }, 250);
      try {
        await attempt(input, state, process, abort);
      } catch (error) {
        const code = doorErrorCode(error, abort.signal);
        input.errors[code] = (input.errors[code] ?? 0) + 1;
        input.messages[code] = error instanceof Error ? error.message : String(error);
        // The next stream starts where this one's events stop, or before the input went in.
        state.after ??= state.from;
        await sleep(backoff * (0.5 + ctx.random()));
        backoff = Math.min(1_500, backoff * 2);
      } finally {
        clearInterval(giveUp);
        abort.abort();
      }
    }
  };
}
