// The store conformance suite: every law of DESIGN.md section 3, as ADR 0001 pins it, run against
// one backend's factory. Each backend's *.test.ts calls this once.
import { describeAgentLaws } from "./laws/agents.js";
import { describeApprovalLaws } from "./laws/approvals.js";
import { describeBadInputLaws } from "./laws/bad-input.js";
import { describeBudgetLaws } from "./laws/budgets.js";
import { describeClaimLaws } from "./laws/claims.js";
import { describeFenceLaws } from "./laws/fences.js";
import { describeCommitLaws } from "./laws/commits.js";
import { describeDeleteLaws } from "./laws/delete.js";
import { describeHistoryLaws } from "./laws/history.js";
import { describeIdleReleaseLaws } from "./laws/idle-release.js";
import { describeIdempotencyKeyLaws } from "./laws/idempotency-keys.js";
import { describeImplicitCreationLaws } from "./laws/implicit-creation.js";
import { describeInputLaws } from "./laws/inputs.js";
import { describeSteerNoticeLaws } from "./laws/steer-notices.js";
import { describeLeaseLaws } from "./laws/leases.js";
import { describeParkedTurnLaws } from "./laws/parked-turns.js";
import { describeQueueLaws } from "./laws/queue.js";
import { describeQuotaLaws } from "./laws/quotas.js";
import { describeTenantChargeLaws } from "./laws/tenant-charges.js";
import { describeStorageQuotaLaws } from "./laws/storage-quotas.js";
import { describeScheduleLaws } from "./laws/schedules.js";
import { describeReclaimLaws } from "./laws/reclaim.js";
import { describeRenewalLaws } from "./laws/renewals.js";
import { describeSessionListLaws } from "./laws/session-list.js";
import { describeTombstoneLaws } from "./laws/tombstones.js";
import { describeToolCallLaws } from "./laws/tool-calls.js";
import { describeTranscriptMarkLaws } from "./laws/transcript-marks.js";
import { describeReadyIndexLaws } from "./laws/ready-index.js";
import { describeTurnStartLaws } from "./laws/turn-start.js";
import { describeTurnRecordLaws } from "./laws/turn-records.js";
import { describeWebhookBatchLaws } from "./laws/webhook-batches.js";
import { describeWebhookDeliveryFoldLaws } from "./laws/webhook-delivery-fold.js";
import { describeWebhookFoldLaws } from "./laws/webhook-fold.js";
import { describeWebhookHintSettleLaws } from "./laws/webhook-hint-settle.js";
import { describeWebhookLaws } from "./laws/webhooks.js";
import type { StoreFactory } from "./support/store-factory.js";

export type { StoreFactory, StoreHarness } from "./support/store-factory.js";

export interface ConformanceOptions {
  /** False where the backend has no quota counters: the wire (ADR 0015 says why). */
  quotas?: boolean;
  /** False where the backend has no tenant spend counter: the wire (ADR 0016 says why). */
  tenantSpend?: boolean;
  /** False where the backend has no schedules: the wire (ADR 0020 says why). */
  schedules?: boolean;
  /** False where the backend has no idempotency-key store: the wire (the front door's own). */
  idempotencyKeys?: boolean;
  /** False where the backend has no webhook store: the wire (ADR 0021 says why). */
  webhooks?: boolean;
  /** False where the backend has no one-step turn start: the wire (ADR 0023 says why). */
  turnStart?: boolean;
  /** False where the backend keeps no turn records: the wire (ADR 0037). */
  turnRecords?: boolean;
  /**
   * True where a commit may carry the tenant's quota and spend charges (ADR 0038): memory and a
   * standalone Redis; Cluster keeps them apart (the tenant's keys sit in another slot).
   */
  chargesInCommit?: boolean;
  /** True where the store keeps the ready index in its own steps: a standalone Redis (ADR 0024). */
  readyIndexInSteps?: boolean;
  /** True where a commit folds its outbox hint and a local claim into its step (ADR 0021). */
  outboxFolded?: boolean;
  /**
   * False where a submitted input's trace cannot be handed to the store: the wire (its SubmitInput
   * keeps the RPC's own span, and the conformance server traces nothing).
   */
  inputTraces?: boolean;
  /** False where the store takes no steer notice: the wire (ADR 0041). */
  steerNotices?: boolean;
}

export function defineStoreConformance(
  factory: StoreFactory,
  options: ConformanceOptions = {},
): void {
  describeLeaseLaws(factory);
  describeReclaimLaws(factory);
  describeRenewalLaws(factory);
  describeIdleReleaseLaws(factory);
  describeCommitLaws(factory);
  describeHistoryLaws(factory);
  describeClaimLaws(factory);
  describeFenceLaws(factory);
  describeQueueLaws(factory);
  describeInputLaws(factory, { keepsTrace: options.inputTraces !== false });
  if (options.steerNotices !== false) describeSteerNoticeLaws(factory);
  describeImplicitCreationLaws(factory);
  describeTombstoneLaws(factory);
  describeSessionListLaws(factory);
  describeDeleteLaws(factory);
  describeTranscriptMarkLaws(factory);
  describeToolCallLaws(factory);
  describeParkedTurnLaws(factory);
  describeApprovalLaws(factory);
  describeAgentLaws(factory);
  describeBadInputLaws(factory);
  if (options.quotas !== false) describeQuotaLaws(factory);
  if (options.quotas !== false) describeStorageQuotaLaws(factory);
  describeBudgetLaws(factory, { tenantSpend: options.tenantSpend !== false });
  if (options.quotas !== false && options.tenantSpend !== false) {
    describeTenantChargeLaws(factory, options.chargesInCommit === true, {
      turnStart: options.turnStart !== false,
    });
  }
  if (options.schedules !== false) describeScheduleLaws(factory);
  if (options.idempotencyKeys !== false) describeIdempotencyKeyLaws(factory);
  if (options.webhooks !== false) describeWebhookLaws(factory);
  if (options.webhooks !== false) describeWebhookBatchLaws(factory);
  if (options.webhooks !== false) describeWebhookFoldLaws(factory, options.outboxFolded === true);
  if (options.webhooks !== false) {
    // The same slots decide both folds: a tenant's keys share the outbox's slot off Cluster.
    describeWebhookDeliveryFoldLaws(factory, options.outboxFolded === true);
    describeWebhookHintSettleLaws(factory, options.outboxFolded === true);
  }
  if (options.turnRecords !== false) describeTurnRecordLaws(factory);
  if (options.turnStart !== false) {
    describeTurnStartLaws(factory);
    describeReadyIndexLaws(factory, options.readyIndexInSteps === true);
  }
}
