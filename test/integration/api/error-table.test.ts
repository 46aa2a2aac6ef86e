// Every refusal the server builds leaves through the one error table (src/api/errors.ts): the
// status and message clients already rely on, plus ErrorInfo naming the reason, also for the
// answers made outside the services (auth, default deadline, health).
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, expect, test } from "vitest";
import { ErrorInfoSchema } from "../../../src/gen/google/rpc/error_details_pb.js";
import { Health } from "../../../src/gen/grpc/health/v1/health_pb.js";
import { LeaseService } from "../../../src/gen/tether/v1/lease_service_pb.js";
import { ClaimBoundary } from "../../../src/gen/tether/v1/queue_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";

let h: ApiServerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function expectWireError(
  call: Promise<unknown>,
  code: Code,
  message: string,
  reason: string,
): Promise<void> {
  const error = await expectCode(call, code);
  expect(error.rawMessage).toBe(message);
  expect(error.findDetails(ErrorInfoSchema).map((d) => [d.domain, d.reason])).toEqual([
    ["tether.dev", reason],
  ]);
}

const owner = {
  ownerId: "o",
  incarnationId: "i",
  liveness: { kind: { case: "opaque" as const, value: {} } },
};

/** Starts a ClaimReadyWork that stays inside the store until the returned function is called. */
async function stalledClaim(server: ApiServerHarness, sessionId: string) {
  const leases = createClient(LeaseService, server.transport);
  const claimed = await leases.claimLease({ sessionId, owner, ttlMs: 60_000n });
  const lease = claimed.result.value;
  let release: () => void = () => undefined;
  server.store.setClaimAfterValidationHook(
    () => new Promise<void>((resolve) => (release = resolve)),
  );
  const call = leases.claimReadyWork({
    fence: {
      sessionId,
      owner,
      leaseToken: lease?.leaseToken ?? "",
      fencingToken: lease?.fencingToken ?? 0n,
    },
    boundary: ClaimBoundary.IDLE,
    maxBatches: 1,
  });
  return { call, release: () => release() };
}

test("CreateSession of an existing id is ALREADY_EXISTS with reason SESSION_ALREADY_EXISTS", async () => {
  h = await startApiServer();
  const sessions = createClient(SessionService, h.transport);
  await sessions.createSession({ sessionId: "dup" });
  await expectWireError(
    sessions.createSession({ sessionId: "dup" }),
    Code.AlreadyExists,
    "session dup already exists",
    "SESSION_ALREADY_EXISTS",
  );
});

test("missing and unknown API keys are UNAUTHENTICATED with reason UNAUTHENTICATED", async () => {
  h = await startApiServer({ env: { TETHER_API_KEYS: "key-a=tenantA" } });
  await expectWireError(
    createClient(SessionService, h.transport).getSession({ sessionId: "x" }),
    Code.Unauthenticated,
    "missing bearer API key",
    "UNAUTHENTICATED",
  );
  const wrongKey = createGrpcTransport({
    baseUrl: h.baseUrl,
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", "Bearer nope");
        return next(req);
      },
    ],
  });
  await expectWireError(
    createClient(SessionService, wrongKey).getSession({ sessionId: "x" }),
    Code.Unauthenticated,
    "unknown API key",
    "UNAUTHENTICATED",
  );
});

test("health Check of an unknown service is NOT_FOUND with reason UNKNOWN_SERVICE", async () => {
  h = await startApiServer();
  await expectWireError(
    createClient(Health, h.transport).check({ service: "no.such.Service" }),
    Code.NotFound,
    "unknown service no.such.Service",
    "UNKNOWN_SERVICE",
  );
});

test("the default deadline is DEADLINE_EXCEEDED with reason DEADLINE_EXCEEDED", async () => {
  h = await startApiServer({ env: { TETHER_REQUEST_TIMEOUT_MS: "200" } });
  const stalled = await stalledClaim(h, "slow");
  await expectWireError(
    stalled.call,
    Code.DeadlineExceeded,
    "the request's deadline passed",
    "DEADLINE_EXCEEDED",
  );
  stalled.release();
  h.store.setClaimAfterValidationHook(undefined);
});
