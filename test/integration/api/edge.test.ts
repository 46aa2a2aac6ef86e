// The edge of the real server: one port for Connect (curl, HTTP/1.1), gRPC-Web and gRPC; bad
// bytes, wrong content types, oversize messages, credentials, tenancy, deadlines, metrics and
// drain. After every refusal the server must still serve.
import { execFile } from "node:child_process";
import { setMaxListeners } from "node:events";
import * as http2 from "node:http2";
import { createServer, type AddressInfo } from "node:net";
import { promisify } from "node:util";
import { Code, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { afterEach, describe, expect, test } from "vitest";
import { ServingStatus } from "../../../src/api/health-service.js";
import { Health } from "../../../src/gen/grpc/health/v1/health_pb.js";
import { LeaseService } from "../../../src/gen/tether/v1/lease_service_pb.js";
import { ClaimBoundary } from "../../../src/gen/tether/v1/queue_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { expectCode } from "../../support/api-clients.js";

const run = promisify(execFile);

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
let h: ApiServerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function stillServing(transport: Transport): Promise<void> {
  const res = await createClient(Health, transport).check({});
  expect(res.status).toBe(ServingStatus.SERVING);
}

/** One raw HTTP/2 request; resolves with the response headers, trailers and body. */
function rawH2(port: number, path: string, headers: Record<string, string>, body: Buffer) {
  return new Promise<{ headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders }>(
    (resolve, reject) => {
      const session = http2.connect(`http://127.0.0.1:${port}`);
      session.on("error", reject);
      const req = session.request({ ":method": "POST", ":path": path, ...headers });
      let responseHeaders: http2.IncomingHttpHeaders = {};
      let trailers: http2.IncomingHttpHeaders = {};
      req.on("response", (hs) => (responseHeaders = hs));
      req.on("trailers", (ts) => (trailers = ts));
      req.on("data", () => undefined);
      req.on("end", () => {
        session.close();
        resolve({ headers: responseHeaders, trailers });
      });
      req.on("error", reject);
      req.end(body);
    },
  );
}

describe("one port, three protocols", () => {
  test("curl makes a Connect JSON unary call over HTTP/1.1", async () => {
    h = await startApiServer();
    const { stdout } = await run("curl", [
      "-s",
      "--http1.1",
      "-H",
      "Content-Type: application/json",
      "-d",
      '{"sessionId":"from-curl","metadata":{"via":"curl"}}',
      `${h.baseUrl}/tether.v1.SessionService/CreateSession`,
    ]);
    expect(JSON.parse(stdout)).toEqual({
      session: { sessionId: "from-curl", headRevision: "1", usage: {}, metadata: { via: "curl" } },
    });
  });

  test("gRPC-Web over HTTP/1.1 and Connect over HTTP/2 reach the same store", async () => {
    h = await startApiServer();
    const web = createGrpcWebTransport({ baseUrl: h.baseUrl, httpVersion: "1.1" });
    await createClient(SessionService, web).createSession({ sessionId: "web" });
    const connect = createConnectTransport({ baseUrl: h.baseUrl, httpVersion: "2" });
    const got = await createClient(SessionService, connect).getSession({ sessionId: "web" });
    expect(got.session?.headRevision).toBe(1n);
  });
});

describe("bad input at the edge", () => {
  // Undecodable request bytes are INTERNAL, as in grpc-go and grpc-java (ADR 0003): the failure
  // happens in the protocol layer before any field could be named.
  test("garbage protobuf bytes in a gRPC frame are INTERNAL and the server keeps serving", async () => {
    h = await startApiServer();
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x0a]);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, garbage.length]), garbage]);
    const res = await rawH2(
      h.server.port,
      "/tether.v1.SessionService/CreateSession",
      { "content-type": "application/grpc", te: "trailers" },
      frame,
    );
    const status = res.trailers["grpc-status"] ?? res.headers["grpc-status"];
    expect(status).toBe(String(Code.Internal));
    await stillServing(h.transport);
  });

  test("a wrong content type is refused with HTTP 415", async () => {
    h = await startApiServer();
    const res = await fetch(`${h.baseUrl}/tether.v1.SessionService/CreateSession`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hello",
    });
    expect(res.status).toBe(415);
    await stillServing(h.transport);
  });

  test("a message over TETHER_MAX_MESSAGE_BYTES is RESOURCE_EXHAUSTED", async () => {
    h = await startApiServer({ env: { TETHER_MAX_MESSAGE_BYTES: "1024" } });
    const sessions = createClient(SessionService, h.transport);
    await expectCode(
      sessions.createSession({ sessionId: "big", metadata: { blob: "x".repeat(4096) } }),
      Code.ResourceExhausted,
    );
    await sessions.createSession({ sessionId: "small", metadata: { blob: "x".repeat(100) } });
    await stillServing(h.transport);
  });

  test("a unary call stuck past TETHER_REQUEST_TIMEOUT_MS is DEADLINE_EXCEEDED", async () => {
    h = await startApiServer({ env: { TETHER_REQUEST_TIMEOUT_MS: "200" } });
    const leases = createClient(LeaseService, h.transport);
    const owner = {
      ownerId: "o",
      incarnationId: "i",
      liveness: { kind: { case: "opaque" as const, value: {} } },
    };
    const claimed = await leases.claimLease({ sessionId: "slow", owner, ttlMs: 60_000n });
    const lease = claimed.result.value;
    let release: () => void = () => undefined;
    h.store.setClaimAfterValidationHook(() => new Promise<void>((resolve) => (release = resolve)));
    await expectCode(
      leases.claimReadyWork({
        fence: {
          sessionId: "slow",
          owner,
          leaseToken: lease?.leaseToken ?? "",
          fencingToken: lease?.fencingToken ?? 0n,
        },
        boundary: ClaimBoundary.IDLE,
        maxBatches: 1,
      }),
      Code.DeadlineExceeded,
    );
    release();
    h.store.setClaimAfterValidationHook(undefined);
    await stillServing(h.transport);
  });
});

describe("auth and tenancy", () => {
  const env = { TETHER_API_KEYS: "key-a=tenantA,key-b=tenantB" };
  const withKey = (baseUrl: string, key: string) =>
    createGrpcTransport({
      baseUrl,
      interceptors: [
        (next) => (req) => {
          req.header.set("authorization", `Bearer ${key}`);
          return next(req);
        },
      ],
    });

  test("missing or wrong keys are UNAUTHENTICATED; health stays open", async () => {
    h = await startApiServer({ env });
    await expectCode(
      createClient(SessionService, h.transport).createSession({ sessionId: "x" }),
      Code.Unauthenticated,
    );
    await expectCode(
      createClient(SessionService, withKey(h.baseUrl, "nope")).createSession({ sessionId: "x" }),
      Code.Unauthenticated,
    );
    await stillServing(h.transport);
  });

  test("another tenant's session is NOT_FOUND and ids never show the tenant", async () => {
    h = await startApiServer({ env });
    const a = createClient(SessionService, withKey(h.baseUrl, "key-a"));
    const b = createClient(SessionService, withKey(h.baseUrl, "key-b"));
    const created = await a.createSession({ sessionId: "shared-name" });
    expect(created.session?.sessionId).toBe("shared-name");
    await expectCode(b.getSession({ sessionId: "shared-name" }), Code.NotFound);
    await expectCode(b.deleteSession({ sessionId: "shared-name" }), Code.NotFound);
    await b.createSession({ sessionId: "shared-name", metadata: { owner: "b" } });
    expect((await a.getSession({ sessionId: "shared-name" })).session?.metadata).toEqual({});
    expect((await b.listSessions({})).sessions.map((s) => s.sessionId)).toEqual(["shared-name"]);
    expect(await h.store.loadSession("tenantA:shared-name" as never)).toBeDefined();
  });
});

describe("operations", () => {
  test("metrics count RPCs by method and code on their own port", async () => {
    h = await startApiServer({ env: { TETHER_METRICS_PORT: String(await freePort()) } });
    await expectCode(
      createClient(SessionService, h.transport).getSession({ sessionId: "none" }),
      Code.NotFound,
    );
    const text = await (await fetch(`http://127.0.0.1:${h.server.metricsPort}/metrics`)).text();
    expect(text).toContain(
      'tether_rpc_total{method="tether.v1.SessionService/GetSession",code="NotFound"} 1',
    );
    expect(text).toContain("tether_rpc_duration_seconds_bucket");
  });

  test("drain flips health to NOT_SERVING, refuses new connections and reports drained", async () => {
    h = await startApiServer();
    await stillServing(h.transport);
    expect(await h.server.drain()).toBe(true);
    expect(h.server.health.get("")).toBe(ServingStatus.NOT_SERVING);
    expect(h.server.draining.aborted).toBe(true);
    const fresh = createGrpcTransport({ baseUrl: h.baseUrl });
    await expect(createClient(Health, fresh).check({})).rejects.toThrow();
  });

  test("holds many concurrent streams without a listener-leak warning", async () => {
    h = await startApiServer();
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    const stop = new AbortController();
    // The client's one signal for all calls is the test's choice, not the server's concern.
    setMaxListeners(0, stop.signal);
    const health = createClient(Health, h.transport);
    try {
      // Each open call links its own signal to the server's shutdown and drain signals.
      const opened: Promise<void>[] = [];
      const streams = Array.from({ length: 24 }, async () => {
        let served: () => void = () => undefined;
        opened.push(new Promise<void>((resolve) => (served = resolve)));
        for await (const update of health.watch({}, { signal: stop.signal })) {
          expect(update.status).toBe(ServingStatus.SERVING);
          served();
        }
      });
      // Every call is open once the server has sent it the current status.
      await Promise.all(opened);
      stop.abort();
      await Promise.allSettled(streams);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
