// A session's durable turn records (ADR 0037, "Items and turns"): one per turn, written by the
// store steps that already start, park, resume and commit the turn, so the plain turn path takes
// no step of its own for it. The store keeps Tether's outcome; the edges name it their way.
import type { TurnOutcome } from "./turn-outcome.js";
import type { RuntimeCommit, UsageTotals } from "./session.js";

export type TurnRecordStatus = "in_progress" | "waiting" | "completed" | "failed" | "cancelled";

/** Distributes Omit over a union, so each variant keeps its own fields. */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * A turn's outcome as its record keeps it: everything but the answer itself (an assistant
 * message's text, a tool's value), which lives in the transcript.
 */
export type TurnOutcomeSummary = OmitEach<TurnOutcome, "text" | "value">;

export interface TurnRecord {
  turnId: string;
  status: TurnRecordStatus;
  /** When the store first wrote the record (its clock, ms). */
  createdAtMs: number;
  /** When the turn first ran (a re-run or a resume keeps the first). */
  startedAtMs?: number;
  /** When its commit applied. */
  completedAtMs?: number;
  /** The turn's usage, from its commit. */
  usage?: UsageTotals;
  /** How it ended, from its commit. */
  outcome?: TurnOutcomeSummary;
}

/** What a turn's commit writes of its record (RuntimeCommit.turnEnd). */
export interface TurnEndRecord {
  turnId: string;
  outcome: TurnOutcomeSummary;
}

/**
 * A commit that may end a turn: with `turnEnd`, the turn's record becomes completed, failed or
 * cancelled in the commit's step, with the commit's `usage`.
 */
export type TurnEndingCommit = RuntimeCommit & { turnEnd?: TurnEndRecord };

export interface TurnRecordQuery {
  /** Exclusive: the page starts after this turn, in `order`. Unknown: turn_not_found. */
  after?: string;
  order: "asc" | "desc";
  limit: number;
}

export interface TurnRecordPage {
  turns: TurnRecord[];
  hasMore: boolean;
}

/**
 * Records kept per session: the newest thousand. A session that runs for months keeps bounded
 * state; the transcript and the event log stay the full account of older turns.
 */
export const TURN_RECORDS_KEPT = 1000;

/** The record's end status for an outcome: the same split the Agents API's turn status makes. */
export function endStatusOf(outcome: TurnOutcomeSummary): "completed" | "failed" | "cancelled" {
  if (outcome.kind === "finished") return "completed";
  return outcome.reason === "cancelled" ? "cancelled" : "failed";
}

/** The outcome without the answer it carries (TurnOutcomeSummary). */
export function summarizeOutcome(outcome: TurnOutcome): TurnOutcomeSummary {
  if (outcome.reason === "assistant_message") {
    const { text: _text, ...rest } = outcome;
    return rest;
  }
  if (outcome.reason === "tool_value") {
    const { value: _value, ...rest } = outcome;
    return rest;
  }
  return outcome;
}
