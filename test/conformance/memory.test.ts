// The conformance suite against the in-memory reference store, on a manual clock.
import { describe } from "vitest";
import { createManualClock } from "../../src/ports/clock.js";
import { createMemoryStore } from "../../src/store/memory/memory-store.js";
import { createMemoryIdempotencyKeyStore } from "../../src/store/memory/idempotency-key-ops.js";
import { createMemoryQuotaStore } from "../../src/store/memory/quota-ops.js";
import { createMemoryStorageQuotaStore } from "../../src/store/memory/storage-quota-ops.js";
import { createMemoryReadyIndex } from "../../src/store/memory/ready-index.js";
import { createMemoryScheduleStore } from "../../src/store/memory/schedule-ops.js";
import { createProcLivenessProbe } from "../../src/store/shared/local-process.js";
import { defineStoreConformance } from "./define-store-conformance.js";
import type { StoreFactory } from "./support/store-factory.js";

const memoryStoreFactory: StoreFactory = async (options) => {
  const clock = createManualClock();
  const store = createMemoryStore({
    clock,
    livenessProbe: createProcLivenessProbe(),
    ...(options?.limits ? { limits: options.limits } : {}),
  });
  const quotas = createMemoryQuotaStore({ clock });
  // The commit's tenant charges reach this quota store (ADR 0038), as build-store wires it.
  store.attachQuotas(quotas);
  return {
    store,
    quotas,
    storageQuotas: createMemoryStorageQuotaStore(),
    idempotencyKeys: createMemoryIdempotencyKeyStore({ clock }),
    schedules: createMemoryScheduleStore({ clock }),
    webhooks: store.webhooks,
    attachSteerNotices: (notice) => store.attachSteerNotices(notice),
    ready: createMemoryReadyIndex(),
    advanceTime: async (ms) => {
      clock.advance(ms);
    },
    // Tokens are floored by the clock, so the last one is near its reading: set it well back.
    clockBehindTokens: async (_sid, ms) => {
      clock.set(clock.nowMs() - ms);
    },
    close: () => store.close(),
  };
};

describe("memory store conformance", () => {
  defineStoreConformance(memoryStoreFactory, { outboxFolded: true, chargesInCommit: true });
});
