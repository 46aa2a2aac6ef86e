// The conformance suite over the wire: a RuntimeStore client of LeaseService, QueueService and
// SessionService against the real server on a loopback port, backed by a memory store on a
// manual clock. Every law the memory store keeps must survive the trip through the API, except
// the ones listed in NOT_OVER_THE_WIRE, each with the reason and the wire's own rule tested here.
import { beforeEach, describe, expect, test } from "vitest";
import { createWireStore } from "../../src/api/client/wire-store.js";
import type { SessionId } from "../../src/domain/ids.js";
import { startApiServer } from "../support/api-server.js";
import { defineStoreConformance } from "./define-store-conformance.js";
import { acquire, expectTetherError, violationFields } from "./support/expectations.js";
import { LONG_TTL_MS, opaqueOwner } from "./support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "./support/store-factory.js";

const wireStoreFactory: StoreFactory = async (options) => {
  const harness = await startApiServer(options?.limits ? { limits: options.limits } : {});
  return {
    store: createWireStore({ transport: harness.transport }),
    advanceTime: async (ms) => {
      harness.clock.advance(ms);
    },
    close: () => harness.close(),
  };
};

/** Laws whose letter the API deliberately narrows; the wire's rule is tested below instead. */
const NOT_OVER_THE_WIRE = new Map([
  [
    "bad input: a session id over 200 characters is invalid_argument; 200 is accepted",
    "client session ids are 1-128 characters (session_service.proto); the server prefixes the " +
      "tenant, so the store's 200-character ceiling is never reached from a client",
  ],
]);

describe("wire store conformance", () => {
  beforeEach((ctx) => {
    if (NOT_OVER_THE_WIRE.has(ctx.task.name)) ctx.skip();
  });
  defineStoreConformance(wireStoreFactory);
});

describe("wire store: the API's session id rule", () => {
  const harness = useStoreHarness(wireStoreFactory);

  test("a 129-character session id is invalid_argument naming session_id; 128 is accepted", async () => {
    const { store } = harness();
    const over = `s${"x".repeat(128)}` as SessionId;
    const error = await expectTetherError(
      () => store.tryClaimLease(over, opaqueOwner("a"), LONG_TTL_MS),
      "invalid_argument",
    );
    expect(violationFields(error)).toEqual(["session_id"]);
    const longest = `s${"x".repeat(127)}` as SessionId;
    const lease = await acquire(store, longest, opaqueOwner("a"), LONG_TTL_MS);
    expect(lease.sessionId).toBe(longest);
  });

  test("characters outside [A-Za-z0-9._-] are invalid_argument naming the field", async () => {
    const { store } = harness();
    const error = await expectTetherError(
      () => store.listWork("has:colon" as SessionId),
      "invalid_argument",
    );
    expect(violationFields(error)).toEqual(["session_id"]);
  });
});
