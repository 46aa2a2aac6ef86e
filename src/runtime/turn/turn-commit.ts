// A turn's commit: everything it consumed and appended, in one atomic step through the head CAS.
import type { TenantCommitCharges } from "../../domain/tenant-charges.js";
import { createHash } from "node:crypto";
import type { Message } from "../../domain/conversation.js";
import { isTetherError } from "../../domain/errors.js";
import { inputClaimCompletion, type TurnInputClaim } from "../../domain/inputs.js";
import type { LeaseFence } from "../../domain/lease.js";
import { queueClaimCompletion, type QueuedWorkClaim } from "../../domain/queue.js";
import type { SessionId } from "../../domain/ids.js";
import type { UsageTotals } from "../../domain/usage.js";
import type { TurnOutcome } from "../../domain/turn-outcome.js";
import { summarizeOutcome } from "../../domain/turn-records.js";
import type { TurnResult } from "../../engine/index.js";
import {
  HEAD_RACE_ATTEMPTS,
  type CommitAnnounced,
  type CommitOutboxFold,
  type FoldedOutboxClaim,
} from "../../domain/session.js";
import type { RuntimeDeps } from "../deps.js";
import { encodeCommitted, encodeMessage } from "./message-codec.js";
import type { WebhookEvent } from "../../domain/webhooks.js";
import type { SessionEvent } from "../../domain/session-events.js";
import { withFoldedOutbox } from "./webhook-events.js";
import { entryCursor, type PendingEntry } from "../stream/index.js";
import type { TurnRun } from "./turn-run.js";
import { costOf } from "./turn-budget.js";

export interface TurnRecord {
  turnId: string;
  messages: Message[];
  usage: UsageTotals;
  /** The turn's client tools: their calls are marked `client` in the transcript (ADR 0037). */
  clientTools?: readonly string[];
  /** How the turn ended: its record (domain/turn-records.ts) ends with it in the commit's step. */
  outcome?: TurnOutcome;
  /** What the turn cost at its model's price (ADR 0016); absent when unpriced. */
  costMicros?: number;
  inputClaims: TurnInputClaim[];
  workClaims: QueuedWorkClaim[];
  /** The parked turn this commit ends, when the turn was resumed. */
  parkedTurnId?: string;
  /** Written to the session's webhook outbox in the commit's step (webhook-events.ts). */
  webhookEvents?: readonly WebhookEvent[];
  /**
   * The turn's turn_completed for the head the commit makes, appended in the commit's step,
   * then the lease released unless something waits for a holder (ADR 0011).
   */
  completion?: {
    event(headRevision: number): SessionEvent;
    releaseIfIdle: boolean;
    /** The turn's events its writer held (EventWriter.takePending), appended just before. */
    held?: readonly PendingEntry[];
  };
  /** The tenant's slot release and held charges, in the commit's step (ADR 0038). */
  tenantCharges?: TenantCommitCharges;
}

export interface CommittedTurn {
  headRevision: number;
  /** True when the commit applied in this call with the turn's tenant charges (not a replay). */
  chargesCarried?: boolean;
  /** Present when the store appended the completion in the commit's step. */
  announced?: CommitAnnounced;
}

/**
 * Commits through the head CAS; a concurrent metadata commit only moves the head, so retry. A
 * superseded claim (the lease went to a successor) is thrown as the store refused it.
 */
export async function commitTurn(
  deps: RuntimeDeps,
  fence: LeaseFence,
  readHead: number,
  turn: TurnRecord,
): Promise<CommittedTurn> {
  // The stamp's hash is over the messages alone: a retry at another head commits the same turn.
  const contentHash = createHash("sha256")
    .update(turn.messages.map(encodeMessage).join("\n"))
    .digest("hex");
  const writesRows = (turn.webhookEvents?.length ?? 0) > 0;
  return withFoldedOutbox(deps, fence.sessionId, writesRows, (fold) =>
    commitAtHead(deps, fence, readHead, turn, contentHash, fold),
  );
}

async function commitAtHead(
  deps: RuntimeDeps,
  fence: LeaseFence,
  readHead: number,
  turn: TurnRecord,
  contentHash: string,
  outboxFold: CommitOutboxFold | undefined,
): Promise<CommittedTurn & { outbox?: FoldedOutboxClaim }> {
  let expected = readHead;
  for (let attempt = 1; ; attempt++) {
    try {
      const receipt = await deps.store.commit({
        sessionId: fence.sessionId,
        expectedHeadRevision: expected,
        // Each message names its turn and the revision this commit makes.
        appendMessages: turn.messages.map((m) =>
          encodeCommitted(markClientCalls(m, turn.clientTools), {
            turnId: turn.turnId,
            revision: expected + 1,
          }),
        ),
        usage: turn.usage,
        ...(turn.costMicros !== undefined && { costMicros: turn.costMicros }),
        advanceTurn: true,
        stamp: { operationId: `turn:${turn.turnId}`, contentHash },
        completeInputClaims: turn.inputClaims.map(inputClaimCompletion),
        completeQueueClaims: turn.workClaims.map(queueClaimCompletion),
        ...(turn.parkedTurnId !== undefined && { parkedTurnId: turn.parkedTurnId }),
        // Steers the turn did not admit go to the next turn in the same step.
        deferTurnInputs: turn.turnId,
        ...(turn.outcome && {
          turnEnd: { turnId: turn.turnId, outcome: summarizeOutcome(turn.outcome) },
        }),
        ...(turn.webhookEvents?.length && { webhookEvents: turn.webhookEvents }),
        ...(turn.webhookEvents?.length && outboxFold && { outboxFold }),
        ...(turn.tenantCharges && { tenantCharges: turn.tenantCharges }),
        ...(turn.completion && {
          announce: {
            fence,
            turnId: turn.turnId,
            // The commit makes head expected + 1 or does not apply.
            eventJson: JSON.stringify(turn.completion.event(expected + 1)),
            ...(turn.completion.held?.length && {
              heldEventsJson: turn.completion.held.map((h) => JSON.stringify(h.event)),
            }),
            releaseIfIdle: turn.completion.releaseIfIdle,
          },
        }),
      });
      const { headRevision, announced, outbox } = receipt;
      // A replay applied nothing, charges included: this run's calls are charged the separate way.
      const chargesCarried = turn.tenantCharges !== undefined && !receipt.replayed;
      return {
        headRevision,
        chargesCarried,
        ...(announced && { announced }),
        ...(outbox && { outbox }),
      };
    } catch (error) {
      if (isTetherError(error, "head_revision_conflict") && attempt < HEAD_RACE_ATTEMPTS) {
        expected = (await deps.store.loadSession(fence.sessionId))?.headRevision ?? 0;
        continue;
      }
      throw error;
    }
  }
}

/** The message with its calls of client tools marked `client` (ToolCallPart). */
function markClientCalls(message: Message, clientTools: readonly string[] = []): Message {
  if (message.role !== "assistant" || clientTools.length === 0) return message;
  const parts = message.parts.map((p) =>
    p.type === "tool_call" && clientTools.includes(p.toolName)
      ? { ...p, client: true as const }
      : p,
  );
  return { ...message, parts };
}

/** Metrics and the log record of a committed turn. */
export function reportCommitted(
  deps: RuntimeDeps,
  sessionId: SessionId,
  turnId: string,
  result: Pick<TurnResult, "outcome" | "usage"> & Partial<Pick<TurnResult, "messages">>,
  headRevision: number,
  fencingToken: number,
): void {
  deps.metrics?.countTurn(result.outcome.kind);
  const provider = deps.provider.name;
  deps.metrics?.addProviderTokens(provider, "input", result.usage.inputTokens);
  deps.metrics?.addProviderTokens(provider, "output", result.usage.outputTokens);
  deps.metrics?.addProviderTokens(provider, "cache_read", result.usage.cacheReadTokens);
  deps.metrics?.addProviderTokens(provider, "cache_write", result.usage.cacheWriteTokens);
  deps.metrics?.addProviderTokens(provider, "reasoning", result.usage.reasoningTokens);
  for (const m of result.messages ?? []) {
    if (m.role === "compaction") deps.metrics?.countCompaction?.(m.mode);
  }
  const { outcome } = result;
  deps.logger.info(
    {
      sessionId,
      turnId,
      outcome: outcome.kind,
      reason: outcome.reason,
      headRevision,
      fencingToken,
    },
    "turn committed",
  );
  if (outcome.kind === "failed" && outcome.reason === "provider_error") {
    const { status, attempts, message } = outcome;
    deps.logger.error({ sessionId, turnId, status, attempts, cause: message }, "model call failed");
  }
}

/** The turn's turn_completed for the head its commit makes. */
export function completionOf(
  run: TurnRun,
  result: Pick<TurnResult, "outcome" | "usage">,
): (headRevision: number) => SessionEvent {
  const spend = costOf(run, result);
  return (headRevision) => ({
    type: "turn_completed",
    outcome: result.outcome,
    headRevision,
    usage: result.usage,
    ...spend,
    fencingToken: run.job.fence.fencingToken,
  });
}

/**
 * A completion the commit appended reaches this replica's bus as the writer's appends do, after
 * the held entries it appended just before it (ADR 0040).
 */
export function publishAnnounced(
  run: TurnRun,
  seq: number,
  event: SessionEvent,
  held: readonly PendingEntry[] = [],
): void {
  const { sessionId, turnId } = run.prep;
  const first = seq - held.length;
  held.forEach((entry, i) => {
    run.deps.bus.publish({ cursor: entryCursor(first + i), sessionId, turnId, event: entry.event });
  });
  run.deps.bus.publish({ cursor: entryCursor(seq), sessionId, turnId, event });
}
