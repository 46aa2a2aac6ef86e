// The seam every backend plugs into the conformance suite: a factory of fresh stores and a way to
// move the store's clock. Laws are written once against this and run per backend.
import { afterEach, beforeEach } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import type { IdempotencyKeyStore } from "../../../src/ports/idempotency-key-store.js";
import type { QuotaStore } from "../../../src/ports/quota-store.js";
import type { ReadyIndex } from "../../../src/ports/ready-index.js";
import type { StorageQuotaStore } from "../../../src/ports/storage-quota-store.js";
import type { ScheduleStore } from "../../../src/ports/schedule-store.js";
import type { RuntimeStore, StoreLimits } from "../../../src/ports/runtime-store.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import type { SteerNotice } from "../../../src/ports/session-signals.js";

export interface StoreHarness {
  store: RuntimeStore;
  /**
   * The tenant quota counters on the same backend and clock (memory, Redis, Cluster); the wire
   * has none: quota operations are not on LeaseService (ADR 0015).
   */
  quotas?: QuotaStore;
  /** Per-tenant storage slots (ADR 0029) on the same backend; the wire has none. */
  storageQuotas?: StorageQuotaStore;
  /** Idempotency-Keys of creates (ADR 0037) on the same backend and clock; the wire has none. */
  idempotencyKeys?: IdempotencyKeyStore;
  /** The schedules on the same backend and clock; the wire has none (ADR 0020). */
  schedules?: ScheduleStore;
  /**
   * The webhook outboxes and endpoints on the same backend as `store` (its commits and parks
   * write outbox rows); the wire has none (ADR 0021 says why).
   */
  webhooks?: WebhookStore;
  /** Attaches the notice a new steer's submit tells in its step (ADR 0041); the wire has none. */
  attachSteerNotices?: (notice: SteerNotice) => void;
  /** The ready index on the same backend and namespace as `store` (ADR 0024); the wire has none. */
  ready?: ReadyIndex;
  /**
   * Moves the store's clock forward by `ms`: a manual clock for the memory store, a real sleep for
   * a backend that reads its server's clock. Tests never read the clock themselves.
   */
  advanceTime(ms: number): Promise<void>;
  /**
   * Leaves the store's clock `ms` behind the session's next fencing token, as after a failover to
   * a server whose clock lags the one that issued the last token (ADR 0022), so the clock floor
   * cannot keep tokens rising: a manual clock is set back; a server's clock cannot be, so the
   * session's generation counter is raised `ms` ahead of it instead.
   */
  clockBehindTokens(sessionId: SessionId, ms: number): Promise<void>;
  close(): Promise<void>;
  /**
   * Longest session id the backend accepts: the store's own 200, or less where an edge narrows
   * it (the API's client ids are at most 128 characters).
   */
  maxSessionIdLength?: number;
}

export type StoreFactory = (options?: { limits?: Partial<StoreLimits> }) => Promise<StoreHarness>;

/**
 * A fresh harness for every test of the enclosing describe block, closed after it. The returned
 * getter is only valid inside a test.
 */
export function useStoreHarness<H extends StoreHarness = StoreHarness>(
  factory: (options?: { limits?: Partial<StoreLimits> }) => Promise<H>,
  options?: { limits?: Partial<StoreLimits> },
): () => H {
  let current: H | undefined;
  beforeEach(async () => {
    current = await factory(options);
  });
  afterEach(async () => {
    const closing = current;
    current = undefined;
    await closing?.close();
  });
  return () => {
    if (!current) throw new Error("the store harness is only available inside a test");
    return current;
  };
}
