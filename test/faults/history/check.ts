// Checks a recorded client history (record.ts) against the sessions read back at the end, in the
// manner of a Jepsen checker: only what clients were told and what the API shows, never Tether's
// code or its records. Operations that failed or whose outcome is unknown may or may not have taken
// effect; an acknowledged one must have, exactly once, in an order that respects real time.
import type {
  CompletionEvent,
  FinalSession,
  HistoryEvent,
  InvokeEvent,
  Observation,
  OperationKind,
} from "./record.js";

export type ViolationKind =
  /** The history itself is inconsistent (a completion without invoke, two completions...). */
  | "malformed_history"
  /** An acknowledged input is not in its session's final history. */
  | "lost"
  /** An input is committed more than once. */
  | "duplicated"
  /** A committed input no client ever submitted (or submitted to another session). */
  | "unknown_input"
  /** Every submission of the input was refused, yet it is committed. */
  | "failed_but_applied"
  /** A submission acknowledged before another was invoked is committed after it. */
  | "real_time_order"
  /** A read observed a state the final history does not extend (it was rolled back). */
  | "rolled_back_read"
  /** A read returned a head older than one already observed before it was invoked. */
  | "stale_read"
  /** A read saw a lower fencing token than one seen before it was invoked. */
  | "fencing_regressed";

export interface Violation {
  kind: ViolationKind;
  session?: string;
  token?: string;
  /** The operations involved, by id in the history. */
  ops: number[];
  detail: string;
}

export interface HistoryCheckReport {
  operations: number;
  /** Per kind: how operations ended; `open` never completed (treated as unknown). */
  outcomes: Record<OperationKind, { ok: number; fail: number; unknown: number; open: number }>;
  inputs: { submitted: number; acknowledged: number; committed: number };
  violations: Violation[];
  /** Violations beyond the reported ones (the count only). */
  omitted: number;
}

export interface CheckOptions {
  /** Report at most this many violations (default 50); the rest are counted. */
  maxViolations?: number;
}

interface Operation {
  invoke: InvokeEvent;
  completion?: CompletionEvent;
}

/** One input (token) across all its submission attempts. */
interface Input {
  token: string;
  session: string;
  ops: number[];
  firstInvoke: number;
  /** When the first attempt was acknowledged; undefined if none was. */
  ackAt?: number;
  ackOp?: number;
  /** Every attempt was refused outright. */
  refused: boolean;
}

interface Position {
  session: string;
  revision: number;
  index: number;
}

const ms = (t: number) => `${t.toFixed(1)}ms`;

export function checkHistory(
  events: HistoryEvent[],
  final: FinalSession[],
  options: CheckOptions = {},
): HistoryCheckReport {
  const max = options.maxViolations ?? 50;
  const violations: Violation[] = [];
  let omitted = 0;
  const report = (v: Violation) => {
    if (violations.length < max) violations.push(v);
    else omitted++;
  };
  const ops = foldOperations(events, report);
  const inputs = collectInputs(ops);
  const positions = finalPositions(final);
  checkInputs(inputs, positions, report);
  checkRealTimeOrder(inputs, positions, report);
  checkReads(ops, final, positions, report);
  checkMonotonicReads(ops, report);
  return {
    operations: ops.size,
    outcomes: outcomes(ops),
    inputs: {
      submitted: inputs.size,
      acknowledged: [...inputs.values()].filter((i) => i.ackAt !== undefined).length,
      committed: positions.size,
    },
    violations,
    omitted,
  };
}

function foldOperations(
  events: HistoryEvent[],
  report: (v: Violation) => void,
): Map<number, Operation> {
  const ops = new Map<number, Operation>();
  const malformed = (op: number, detail: string) =>
    report({ kind: "malformed_history", ops: [op], detail });
  for (const event of events) {
    const known = ops.get(event.op);
    if (event.type === "invoke") {
      if (known) malformed(event.op, `operation ${event.op} invoked twice`);
      else ops.set(event.op, { invoke: event });
      continue;
    }
    if (!known)
      malformed(event.op, `operation ${event.op} completed (${event.type}) but never invoked`);
    else if (known.completion) malformed(event.op, `operation ${event.op} completed twice`);
    else if (event.at < known.invoke.at)
      malformed(event.op, `operation ${event.op} completed before its invoke`);
    else known.completion = event;
  }
  return ops;
}

function outcomes(ops: Map<number, Operation>): HistoryCheckReport["outcomes"] {
  const zero = () => ({ ok: 0, fail: 0, unknown: 0, open: 0 });
  const counts = { submit: zero(), await: zero(), read: zero(), answer: zero() };
  for (const { invoke, completion } of ops.values()) {
    counts[invoke.kind][completion?.type ?? "open"]++;
  }
  return counts;
}

function collectInputs(ops: Map<number, Operation>): Map<string, Input> {
  const inputs = new Map<string, Input>();
  for (const { invoke, completion } of ops.values()) {
    if (invoke.kind !== "submit" || invoke.token === undefined) continue;
    let input = inputs.get(invoke.token);
    if (!input) {
      input = {
        token: invoke.token,
        session: invoke.session,
        ops: [],
        firstInvoke: invoke.at,
        refused: true,
      };
      inputs.set(invoke.token, input);
    }
    input.ops.push(invoke.op);
    input.firstInvoke = Math.min(input.firstInvoke, invoke.at);
    // Only a refusal is known to have no effect; an open or unknown attempt may have landed.
    if (completion?.type !== "fail") input.refused = false;
    if (completion?.type === "ok" && (input.ackAt === undefined || completion.at < input.ackAt)) {
      input.ackAt = completion.at;
      input.ackOp = invoke.op;
    }
  }
  return inputs;
}

/** Every committed token with where it sits; a token committed twice keeps all its places. */
function finalPositions(final: FinalSession[]): Map<string, Position[]> {
  const positions = new Map<string, Position[]>();
  for (const session of final) {
    for (const { revision, tokens } of session.revisions) {
      tokens.forEach((token, index) => {
        const at = positions.get(token) ?? [];
        at.push({ session: session.session, revision, index });
        positions.set(token, at);
      });
    }
  }
  return positions;
}

const where = (p: Position) => `${p.session}@${p.revision}[${p.index}]`;

function checkInputs(
  inputs: Map<string, Input>,
  positions: Map<string, Position[]>,
  report: (v: Violation) => void,
): void {
  for (const [token, places] of positions) {
    const input = inputs.get(token);
    const base = { token, session: places[0]?.session ?? "", ops: input?.ops ?? [] };
    if (!input) {
      report({
        kind: "unknown_input",
        ...base,
        detail: `${token} committed at ${places.map(where).join(", ")} but never submitted`,
      });
      continue;
    }
    const foreign = places.filter((p) => p.session !== input.session);
    if (foreign.length > 0) {
      report({
        kind: "unknown_input",
        ...base,
        session: input.session,
        detail: `${token} submitted to ${input.session} but committed at ${foreign.map(where).join(", ")}`,
      });
    }
    if (places.length > 1) {
      report({
        kind: "duplicated",
        ...base,
        detail: `${token} committed ${places.length} times: ${places.map(where).join(", ")}`,
      });
    }
    if (input.refused) {
      report({
        kind: "failed_but_applied",
        ...base,
        detail: `every submission of ${token} (ops ${input.ops.join(", ")}) was refused, yet it is committed at ${places.map(where).join(", ")}`,
      });
    }
  }
  for (const input of inputs.values()) {
    if (input.ackAt === undefined) continue;
    const home = (positions.get(input.token) ?? []).filter((p) => p.session === input.session);
    if (home.length === 0) {
      report({
        kind: "lost",
        token: input.token,
        session: input.session,
        ops: input.ops,
        detail: `${input.token} acknowledged by op ${input.ackOp} at ${ms(input.ackAt)} but not in the final history of ${input.session}`,
      });
    }
  }
}

const before = (a: Position, b: Position) =>
  a.revision < b.revision || (a.revision === b.revision && a.index < b.index);

/**
 * An input acknowledged before another was first invoked must precede it in their session's
 * committed order. A sweep over invocations in time order, keeping the latest-placed input among
 * those acknowledged so far: any input placed before it is a violation.
 */
function checkRealTimeOrder(
  inputs: Map<string, Input>,
  positions: Map<string, Position[]>,
  report: (v: Violation) => void,
): void {
  const bySession = new Map<string, { input: Input; at: Position }[]>();
  for (const input of inputs.values()) {
    const at = positions.get(input.token)?.find((p) => p.session === input.session);
    if (!at) continue;
    const list = bySession.get(input.session) ?? [];
    list.push({ input, at });
    bySession.set(input.session, list);
  }
  for (const [session, placed] of bySession) {
    const invoked = [...placed].sort((a, b) => a.input.firstInvoke - b.input.firstInvoke);
    const acked = placed
      .filter((p) => p.input.ackAt !== undefined)
      .sort((a, b) => (a.input.ackAt ?? 0) - (b.input.ackAt ?? 0));
    let latest: { input: Input; at: Position } | undefined;
    let next = 0;
    for (const b of invoked) {
      while (next < acked.length && (acked[next]?.input.ackAt ?? Infinity) < b.input.firstInvoke) {
        const a = acked[next++];
        if (a && (!latest || before(latest.at, a.at))) latest = a;
      }
      if (latest && latest.input !== b.input && before(b.at, latest.at)) {
        const a = latest.input;
        report({
          kind: "real_time_order",
          session,
          token: b.input.token,
          ops: [a.ackOp ?? -1, ...b.input.ops],
          detail: `${a.token} was acknowledged at ${ms(a.ackAt ?? 0)} (op ${a.ackOp}) before ${b.input.token} was first submitted at ${ms(b.input.firstInvoke)}, yet ${b.input.token} is committed at ${where(b.at)} before ${a.token} at ${where(latest.at)}`,
        });
      }
    }
  }
}

/**
 * Every state a read observed must be part of the final history: the same inputs at each
 * revision it saw, no head beyond the final one; an input a stream reported committed at a
 * revision must be there.
 */
function checkReads(
  ops: Map<number, Operation>,
  final: FinalSession[],
  positions: Map<string, Position[]>,
  report: (v: Violation) => void,
): void {
  const sessions = new Map(final.map((s) => [s.session, s]));
  for (const { invoke, completion } of ops.values()) {
    if (completion?.type !== "ok" || !completion.value) continue;
    const value = completion.value;
    const session = invoke.session;
    const finalSession = sessions.get(session);
    const finalHead = finalSession?.head ?? 0;
    const rolledBack = (detail: string) =>
      report({
        kind: "rolled_back_read",
        session,
        ops: [invoke.op],
        ...(invoke.token !== undefined && { token: invoke.token }),
        detail: `op ${invoke.op} (${invoke.kind} via ${invoke.via ?? "?"}, ${ms(invoke.at)}..${ms(completion.at)}) ${detail}`,
      });
    if (invoke.kind === "await" && invoke.token !== undefined && value.headRevision !== undefined) {
      const at = positions.get(invoke.token)?.find((p) => p.session === session);
      if (at?.revision !== value.headRevision) {
        rolledBack(
          `saw ${invoke.token} committed at revision ${value.headRevision}; the final history has it ${at ? `at ${where(at)}` : "nowhere"}`,
        );
      }
    }
    if (invoke.kind !== "read") continue;
    if ((value.head ?? 0) > finalHead) {
      rolledBack(`saw head revision ${value.head}; the final head is ${finalHead}`);
      continue;
    }
    const finalAt = new Map((finalSession?.revisions ?? []).map((r) => [r.revision, r.tokens]));
    for (const seen of value.revisions ?? []) {
      const kept = finalAt.get(seen.revision) ?? [];
      if (seen.tokens.join() !== kept.join()) {
        rolledBack(
          `saw revision ${seen.revision} holding [${seen.tokens.join(", ")}]; the final history holds [${kept.join(", ")}] there`,
        );
        break;
      }
    }
  }
}

interface Sighting {
  op: number;
  invokedAt: number;
  completedAt: number;
  value: number;
  /** Reads are judged; any sighting bounds later ones. */
  judged: boolean;
}

/**
 * Reads in real time never go back: a read invoked after a head revision (or a fencing token) was
 * observed must show at least that one. Concurrent operations may see either order.
 */
function checkMonotonicReads(ops: Map<number, Operation>, report: (v: Violation) => void): void {
  const heads = new Map<string, Sighting[]>();
  const fences = new Map<string, Sighting[]>();
  const add = (into: Map<string, Sighting[]>, session: string, s: Sighting) => {
    const list = into.get(session) ?? [];
    list.push(s);
    into.set(session, list);
  };
  for (const { invoke, completion } of ops.values()) {
    if (completion?.type !== "ok" || !completion.value) continue;
    const v: Observation = completion.value;
    const base = { op: invoke.op, invokedAt: invoke.at, completedAt: completion.at };
    const isRead = invoke.kind === "read";
    const head = isRead ? v.head : invoke.kind === "await" ? v.headRevision : undefined;
    if (head !== undefined) add(heads, invoke.session, { ...base, value: head, judged: isRead });
    if (isRead && v.fencingToken !== undefined) {
      add(fences, invoke.session, { ...base, value: v.fencingToken, judged: true });
    }
  }
  sweep(heads, "stale_read", "head revision", report);
  sweep(fences, "fencing_regressed", "fencing token", report);
}

function sweep(
  bySession: Map<string, Sighting[]>,
  kind: ViolationKind,
  what: string,
  report: (v: Violation) => void,
): void {
  for (const [session, sightings] of bySession) {
    const byCompletion = [...sightings].sort((a, b) => a.completedAt - b.completedAt);
    const byInvoke = sightings.filter((s) => s.judged).sort((a, b) => a.invokedAt - b.invokedAt);
    let highest: Sighting | undefined;
    let next = 0;
    for (const s of byInvoke) {
      while (
        next < byCompletion.length &&
        (byCompletion[next]?.completedAt ?? Infinity) < s.invokedAt
      ) {
        const seen = byCompletion[next++];
        if (seen && (!highest || seen.value > highest.value)) highest = seen;
      }
      if (highest && s.value < highest.value) {
        report({
          kind,
          session,
          ops: [highest.op, s.op],
          detail: `op ${s.op} (invoked ${ms(s.invokedAt)}) saw ${what} ${s.value}, but op ${highest.op} had already seen ${highest.value} (completed ${ms(highest.completedAt)})`,
        });
      }
    }
  }
}
