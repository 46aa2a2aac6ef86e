// The concurrent_streams quota through the API (ADR 0028), on a real server over Redis: a tenant's
// streams past its limit are refused with RESOURCE_EXHAUSTED and a QuotaFailure naming the limit,
// GetQuotaUsage shows them open, and a stream that ends frees its place.
import { Code, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { routeTurnService } from "../../../src/api/routes.js";
import { usage } from "../../../src/domain/usage.js";
import { QuotaFailureSchema } from "../../../src/gen/google/rpc/error_details_pb.js";
import {
  QuotaLimitKind,
  QuotaMode,
  QuotaService,
} from "../../../src/gen/tether/v1/quota_service_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import { loadConfig } from "../../../src/server/config.js";
import { createLogger } from "../../../src/server/logger.js";
import { createTetherServer, type TetherServer } from "../../../src/server/server.js";
import { expectCode } from "../../support/api-clients.js";
import { freshNamespace } from "../../support/redis-store-factory.js";
import { createRuntimeHarness, type RuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const STREAMS = 3;
const ENV = {
  TETHER_PORT: "0",
  TETHER_METRICS_PORT: "0",
  TETHER_LOG_LEVEL: "silent",
  TETHER_API_KEYS: "key-viewer=viewer,key-other=other",
  TETHER_QUOTAS: JSON.stringify({ tenants: { viewer: { concurrent_streams: STREAMS } } }),
};
const auth = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const textInput = (text: string) => [{ kind: { case: "text" as const, value: text } }];

const echo: ModelProvider = {
  name: "echo",
  capabilities: { images: false },
  call() {
    return (async function* () {
      yield { type: "text_delta" as const, text: "ok" };
      return {
        fullText: "ok",
        parts: [{ type: "text" as const, text: "ok" }],
        usage: usage({ inputTokens: 1, outputTokens: 1 }),
      };
    })();
  },
};

describe("concurrent streams per tenant (redis)", () => {
  let redis: Redis;
  let harness: RuntimeHarness;
  let server: TetherServer;
  let transport: Transport;

  beforeAll(async () => {
    redis = new Redis(inject("redisUrl"));
    const config = loadConfig(ENV);
    harness = createRuntimeHarness({
      provider: echo,
      redis,
      namespace: freshNamespace("streams"),
      quotas: { config: config.quotas },
    });
    server = await createTetherServer({
      config,
      store: harness.store,
      logger: createLogger({ level: "silent" }),
      routes: (router) => routeTurnService(router, { runtime: harness.runtime }),
      quotas: harness.quotas,
    });
    transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` });
  });

  afterAll(async () => {
    await harness.runtime.drain(2_000);
    await server.close();
    redis.disconnect();
  });

  /** A watch held open until `stop` aborts; resolves once it has received its first event. */
  function openWatch(key: string, sessionId: string, stop: AbortController) {
    const turns = createClient(TurnService, transport);
    const iterator = turns
      .watchSession({ sessionId, afterCursor: 0n }, { ...auth(key), signal: stop.signal })
      [Symbol.asyncIterator]();
    return iterator.next();
  }

  test("past the limit a watch is RESOURCE_EXHAUSTED with QuotaFailure; GetQuotaUsage counts the open ones; an ended watch frees its place", async () => {
    const turns = createClient(TurnService, transport);
    for (const key of ["key-viewer", "key-other"]) {
      for await (const _ of turns.streamTurn(
        { sessionId: "s", input: textInput("hi") },
        auth(key),
      ));
    }
    const stops = Array.from({ length: STREAMS }, () => new AbortController());
    // Each watch receives the session's first event, so it is open on the server.
    await Promise.all(stops.map((stop) => openWatch("key-viewer", "s", stop)));

    const quotas = createClient(QuotaService, transport);
    const streamsOf = async (key: string) =>
      (await quotas.getQuotaUsage({}, auth(key))).limits.find(
        (l) => l.kind === QuotaLimitKind.CONCURRENT_STREAMS,
      );
    expect(await streamsOf("key-viewer")).toMatchObject({
      mode: QuotaMode.REJECT,
      limit: BigInt(STREAMS),
      used: BigInt(STREAMS),
      resetTimeUnixMs: 0n,
    });

    const refusal = await expectCode(
      openWatch("key-viewer", "s", new AbortController()),
      Code.ResourceExhausted,
    );
    const violation = refusal.findDetails(QuotaFailureSchema)[0]?.violations[0];
    expect(violation?.quotaId).toBe("concurrent_streams");
    expect(violation?.subject).toBe("viewer");
    expect(violation?.quotaValue).toBe(BigInt(STREAMS));
    // A turn's stream counts too: it holds the same reads.
    await expectCode(
      (async () => {
        for await (const _ of turns.streamTurn(
          { sessionId: "s2", input: textInput("hi") },
          auth("key-viewer"),
        ));
      })(),
      Code.ResourceExhausted,
    );

    // Another tenant is not limited by the viewer's streams: it has its own (the default).
    const otherStop = new AbortController();
    await openWatch("key-other", "s", otherStop);
    expect(await streamsOf("key-other")).toMatchObject({ limit: 256n, used: 1n });
    otherStop.abort();

    // A watch the client ends gives its place back.
    stops[0]?.abort();
    await waitFor(async () => (await streamsOf("key-viewer"))?.used === BigInt(STREAMS - 1), {
      what: "the ended watch to give its place back",
    });
    const again = new AbortController();
    await openWatch("key-viewer", "s", again);
    for (const stop of [...stops, again]) stop.abort();
    await waitFor(async () => (await streamsOf("key-viewer"))?.used === 0n, {
      what: "every watch's place to be given back",
    });
  });
});
