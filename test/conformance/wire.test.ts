// The conformance suite over the wire: a RuntimeStore client of LeaseService, QueueService and
// SessionService against the real server on a loopback port, backed by a memory store on a
// manual clock. Every law the memory store keeps must survive the trip through the API, except
// the session id length, which the API narrows to 128 characters (the harness says so).
import { describe, expect, test } from "vitest";
import { createWireStore } from "../support/wire-store.js";
import type { SessionId } from "../../src/domain/ids.js";
import { startApiServer } from "../support/api-server.js";
import { defineStoreConformance } from "./define-store-conformance.js";
import { expectTetherError, violationFields } from "./support/expectations.js";
import { useStoreHarness, type StoreFactory } from "./support/store-factory.js";

const wireStoreFactory: StoreFactory = async (options) => {
  const harness = await startApiServer(options?.limits ? { limits: options.limits } : {});
  return {
    store: createWireStore({ transport: harness.transport }),
    advanceTime: async (ms) => {
      harness.clock.advance(ms);
    },
    clockBehindTokens: async (_sid, ms) => {
      harness.clock.set(harness.clock.nowMs() - ms);
    },
    close: () => harness.close(),
    // Client session ids are 1-128 characters (session_service.proto); the server prefixes the
    // tenant, so the store's own 200-character ceiling is never reached from a client.
    maxSessionIdLength: 128,
  };
};

describe("wire store conformance", () => {
  // Quota counters (ADR 0015), tenant spend (ADR 0016), schedules (ADR 0020) and webhook
  // outboxes (ADR 0021) are the server's own: LeaseService does not carry them; nor does it
  // carry a one-step turn start (ADR 0023). A submitted input's trace is SubmitInput's own RPC
  // span (ADR 0013), which this untraced server does not have.
  defineStoreConformance(wireStoreFactory, {
    inputTraces: false,
    quotas: false,
    tenantSpend: false,
    schedules: false,
    idempotencyKeys: false,
    webhooks: false,
    steerNotices: false,
    turnStart: false,
    turnRecords: false,
  });
});

describe("wire store: the API's session id rule", () => {
  const harness = useStoreHarness(wireStoreFactory);

  test("characters outside [A-Za-z0-9._-] are invalid_argument naming the field", async () => {
    const { store } = harness();
    const error = await expectTetherError(
      () => store.listWork("has:colon" as SessionId),
      "invalid_argument",
    );
    expect(violationFields(error)).toEqual(["session_id"]);
  });
});
