// The fault suite's history: every client operation as one invoke event and at most one
// completion (ok, fail or unknown), timed on one monotonic clock, in the shape check.ts reads.
// Plain data only: nothing here (nor in check.ts) knows Tether's code or generated types.

/**
 * - `submit`: one StreamTurn attempt, as a write of its input. ok when the server acknowledged the
 *   input (input_queued, or turn_started naming it); unknown when the stream broke before; fail
 *   only for a refusal that precedes any effect.
 * - `await`: waiting for the turn that consumes an input, on the same stream after its ack or on a
 *   WatchSession resume; ok when turn_completed arrived (a read: the input is at that revision).
 * - `read`: GetSession with the transcript: head revision, lease fencing token, committed inputs.
 * - `answer`: a tool result or approval sent for a parked turn (recorded, not judged here).
 */
export type OperationKind = "submit" | "await" | "read" | "answer";

export interface RevisionInputs {
  revision: number;
  /** The input tokens the commit of this revision holds, in transcript order. */
  tokens: string[];
}

export interface Observation {
  inputId?: string;
  turnId?: string;
  /** await: the head revision of the commit that consumed the input. */
  headRevision?: number;
  /** read: the session's head revision (0 when it did not exist yet). */
  head?: number;
  /** read: the live lease's fencing token, when a lease was held. */
  fencingToken?: number;
  /** read: the committed inputs per revision, revisions 1..head. */
  revisions?: RevisionInputs[];
}

export interface InvokeEvent {
  type: "invoke";
  op: number;
  /** The client (logical process) issuing it; -1 for tool answers, sent beside their client's stream. */
  process: number;
  /** Milliseconds on the recorder's monotonic clock. */
  at: number;
  kind: OperationKind;
  session: string;
  /** The input the operation is about (submit, await, answer): its unique text token. */
  token?: string;
  /** submit: the idempotency key (client_request_id) every attempt for one input shares. */
  requestId?: string;
  /** Which replica it went to. */
  via?: string;
}

export interface CompletionEvent {
  type: "ok" | "fail" | "unknown";
  op: number;
  at: number;
  value?: Observation;
  /** fail / unknown: the error code and message. */
  error?: string;
}

export type HistoryEvent = InvokeEvent | CompletionEvent;

/** What the suite reads back through the API once every client is done. */
export interface FinalSession {
  session: string;
  head: number;
  revisions: RevisionInputs[];
}

export interface OperationHandle {
  readonly op: number;
  ok(value?: Observation): void;
  fail(error: string, value?: Observation): void;
  unknown(error: string, value?: Observation): void;
}

export interface HistoryRecorder {
  readonly events: HistoryEvent[];
  invoke(fields: Omit<InvokeEvent, "type" | "op" | "at">): OperationHandle;
  /** Milliseconds since the recorder started. */
  now(): number;
}

/**
 * A recorder on `performance.now()` (monotonic, unlike Date.now). The first completion of an
 * operation wins; later ones are ignored, so a stream's error path cannot overwrite its ok.
 */
export function createHistoryRecorder(
  clock: () => number = () => performance.now(),
): HistoryRecorder {
  const origin = clock();
  const now = () => clock() - origin;
  const events: HistoryEvent[] = [];
  let next = 0;
  return {
    events,
    now,
    invoke(fields) {
      const op = next++;
      events.push({ type: "invoke", op, at: now(), ...fields });
      let done = false;
      const complete = (type: CompletionEvent["type"], value?: Observation, error?: string) => {
        if (done) return;
        done = true;
        events.push({
          type,
          op,
          at: now(),
          ...(value !== undefined && { value }),
          ...(error !== undefined && { error }),
        });
      };
      return {
        op,
        ok: (value) => complete("ok", value),
        fail: (error, value) => complete("fail", value, error),
        unknown: (error, value) => complete("unknown", value, error),
      };
    },
  };
}

const TOKEN = /tok[0-9a-f]{32}/gu;

/**
 * The committed inputs per revision from a transcript as the API returns it (role and texts per
 * message, with the revision that added it): user messages only, since the echo model's reply
 * repeats the token. Revisions 1..head are all listed, empty when no input was committed there.
 */
export function inputsByRevision(
  head: number,
  messages: { user: boolean; revision: number; texts: string[] }[],
): RevisionInputs[] {
  const revisions: RevisionInputs[] = Array.from({ length: head }, (_, i) => ({
    revision: i + 1,
    tokens: [],
  }));
  for (const message of messages) {
    if (!message.user) continue;
    const tokens = message.texts.flatMap((t) => t.match(TOKEN) ?? []);
    const at = revisions[message.revision - 1];
    if (at) at.tokens.push(...tokens);
    else revisions.push({ revision: message.revision, tokens });
  }
  return revisions;
}
