// The thin webhook events a turn's commit and park carry into the store (ADR 0021): ids only, so
// receivers re-read state. Written only when the replica has webhooks wired (deps.webhooks).
import { createHash } from "node:crypto";
import type { SessionId } from "../../domain/ids.js";
import { clientSessionId } from "../../domain/ids.js";
import type { ToolWait } from "../../domain/tool-calls.js";
import type { TurnOutcome } from "../../domain/turn-outcome.js";
import type { WebhookEvent, WebhookEventType } from "../../domain/webhooks.js";
import type { RuntimeDeps } from "../deps.js";
import type { CommitOutboxFold, FoldedOutboxClaim } from "../../domain/session.js";

/**
 * The id is derived from what the event reports, so a commit retried at another head (the same
 * turn) writes the same id, and the outbox's idempotency by id keeps it one event.
 */
function eventId(...parts: (string | number)[]): string {
  return `msg_${createHash("sha256").update(parts.join("\n")).digest("base64url").slice(0, 27)}`;
}

function outcomeType(outcome: TurnOutcome): WebhookEventType {
  if (outcome.kind === "failed") return "turn.failed";
  if (outcome.kind === "stopped" && outcome.reason === "cancelled") return "turn.cancelled";
  return "turn.completed";
}

/**
 * The events a turn's commit writes: how the turn ended and, when a spend budget stopped it,
 * `session.budget_reached` naming the budget (ADR 0016), so an unattended session's owner hears
 * that it will not run further turns until the budget changes.
 */
export function turnEndEvents(
  deps: RuntimeDeps,
  sessionId: SessionId,
  turnId: string,
  outcome: TurnOutcome,
): WebhookEvent[] {
  if (!deps.webhooks) return [];
  const type = outcomeType(outcome);
  const createdAtMs = deps.clock.nowMs();
  const ids = { session_id: clientSessionId(sessionId), turn_id: turnId };
  const events: WebhookEvent[] = [
    {
      id: eventId(sessionId, turnId, type),
      type,
      createdAtMs,
      data: { ...ids, outcome: outcome.kind, reason: outcome.reason },
    },
  ];
  if (outcome.kind === "stopped" && outcome.reason === "budget_exhausted") {
    const reached = outcome.reached;
    events.push({
      id: eventId(sessionId, turnId, "session.budget_reached"),
      type: "session.budget_reached",
      createdAtMs,
      data: {
        ...ids,
        scope: reached?.scope ?? "turn",
        limit: reached?.limit ?? "tokens",
        max: String(reached?.max ?? outcome.budgetTokens),
        spent: String(reached?.spent ?? outcome.usedTokens),
      },
    });
  }
  return events;
}

/** A parked turn waits on these calls: client results and approvals, by call id. */
export function actionRequiredEvent(
  deps: RuntimeDeps,
  sessionId: SessionId,
  turnId: string,
  waits: readonly ToolWait[],
  fencingToken: number,
): WebhookEvent | undefined {
  if (!deps.webhooks) return undefined;
  const ids = (kind: ToolWait["kind"]) => waits.filter((w) => w.kind === kind).map((w) => w.callId);
  return {
    // Each park of the turn (a resumed turn may park again) is its own event.
    id: eventId(sessionId, turnId, "park", fencingToken),
    type: "session.action_required",
    createdAtMs: deps.clock.nowMs(),
    data: {
      session_id: clientSessionId(sessionId),
      turn_id: turnId,
      call_ids: [...new Set(waits.map((w) => w.callId))],
      result_call_ids: ids("result"),
      approval_call_ids: ids("approval"),
    },
  };
}

/**
 * Writes `write` (a commit or park carrying outbox rows) between the outbox hint's expect and
 * its note (ADR 0021 "The hint"). A note that fails is logged, not thrown: the write stands, and
 * the expect makes its rows due a delivery lease later.
 */
export async function withOutboxHint<T>(
  deps: RuntimeDeps,
  sessionId: SessionId,
  writesRows: boolean,
  write: () => Promise<T>,
): Promise<T> {
  const hints = writesRows ? deps.webhooks : undefined;
  if (!hints) return write();
  await hints.expect(sessionId);
  const result = await write();
  hints.written(sessionId).catch((error: unknown) => {
    deps.logger.warn({ sessionId, error }, "webhook outbox hint not written");
  });
  return result;
}

/**
 * A park carrying an outbox row, on a store that keeps the hint in its steps (RuntimeStore
 * .foldsOutbox; ADR 0021 "The hint dropped in the settle"): the hint's expect rides in the
 * park's step, with the row, so a settle that empties the outbox meanwhile cannot leave the row
 * unlisted; then the nudge (or note) as after any write. Elsewhere, withOutboxHint's steps.
 */
export async function withParkedOutbox<T>(
  deps: RuntimeDeps,
  sessionId: SessionId,
  writesRows: boolean,
  write: (expect?: { nowMs: number; dueAtMs: number }) => Promise<T>,
): Promise<T> {
  const hints = writesRows ? deps.webhooks : undefined;
  if (!hints?.fold || deps.store.foldsOutbox !== true) {
    return withOutboxHint(deps, sessionId, writesRows, () => write());
  }
  const { nowMs, dueAtMs } = hints.fold(sessionId);
  const result = await write({ nowMs, dueAtMs });
  hints.written(sessionId).catch((error: unknown) => {
    deps.logger.warn({ sessionId, error }, "webhook outbox hint not written");
  });
  return result;
}

/**
 * A commit carrying outbox rows, on a store that folds the outbox (ADR 0021 "Folded into the
 * commit"): the hint's expect rides in the commit's step, and so does the claim of its rows for
 * this replica's deliverer, which then only settles them. Elsewhere, withOutboxHint's steps.
 */
export async function withFoldedOutbox<T extends { outbox?: FoldedOutboxClaim }>(
  deps: RuntimeDeps,
  sessionId: SessionId,
  writesRows: boolean,
  write: (fold?: CommitOutboxFold) => Promise<T>,
): Promise<Omit<T, "outbox">> {
  const hints = writesRows ? deps.webhooks : undefined;
  if (!hints?.fold || !hints.folded || deps.store.foldsOutbox !== true) {
    return withOutboxHint(deps, sessionId, writesRows, () => write());
  }
  const fold = hints.fold(sessionId);
  const { outbox, ...result } = await write(fold);
  hints.folded(sessionId, fold, outbox).catch((error: unknown) => {
    deps.logger.warn({ sessionId, error }, "webhook outbox hint not written");
  });
  return result;
}
