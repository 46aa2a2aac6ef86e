// Tenant quotas end to end (ADR 0015), on memory, Redis and Redis Cluster: two replicas (each its
// own runtime, sweeper and server) share one store. A queue-mode concurrency limit holds across
// both replicas while every input of many sessions runs; a reject-mode limit answers
// RESOURCE_EXHAUSTED with QuotaFailure and RetryInfo (decoded by Connect and by grpc-js);
// GetQuotaUsage reads the caller's own tenant.
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { Code, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { Cluster } from "ioredis";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { routeTurnService } from "../../../src/api/routes.js";
import type { SessionId } from "../../../src/domain/ids.js";
import { usage } from "../../../src/domain/usage.js";
import {
  QuotaFailureSchema,
  RetryInfoSchema,
} from "../../../src/gen/google/rpc/error_details_pb.js";
import {
  QuotaLimitKind,
  QuotaMode,
  QuotaService,
} from "../../../src/gen/tether/v1/quota_service_pb.js";
import type { TurnEvent } from "../../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { QueueService } from "../../../src/gen/tether/v1/queue_service_pb.js";
import { DeliveryPolicy, SlotPolicy, WorkClass } from "../../../src/gen/tether/v1/queue_pb.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import { startSweeper, type Sweeper } from "../../../src/runtime/background/sweeper.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import { loadConfig } from "../../../src/server/config.js";
import { createLogger } from "../../../src/server/logger.js";
import { createMetricLabels } from "../../../src/server/metric-labels.js";
import { createMetrics } from "../../../src/server/metrics.js";
import { createTetherServer, type TetherServer } from "../../../src/server/server.js";
import { expectCode } from "../../support/api-clients.js";
import { metricValue } from "../../support/metric-values.js";
import { connectCluster } from "../../support/redis-store-factory.js";
import { createRuntimeHarness, type RuntimeHarness } from "../../support/runtime-harness.js";
import { sleep } from "../../support/wait-for.js";

const CONCURRENT_TURNS = 2;
const QUOTAS = {
  tenants: {
    acme: { concurrent_turns: CONCURRENT_TURNS },
    strict: { turns_per_minute: { max: 1, mode: "reject" } },
  },
};
const ENV = {
  TETHER_PORT: "0",
  TETHER_METRICS_PORT: "0",
  TETHER_LOG_LEVEL: "silent",
  TETHER_API_KEYS: "key-acme=acme,key-strict=strict",
  TETHER_QUOTAS: JSON.stringify(QUOTAS),
};
const auth = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const textInput = (text: string) => [{ kind: { case: "text" as const, value: text } }];

/** A model whose calls overlap (each takes a moment) and which records how many ran at once. */
function recordingProvider() {
  const seen = { running: 0, max: 0, calls: 0 };
  const provider: ModelProvider = {
    name: "recording",
    capabilities: { images: false },
    call() {
      return (async function* () {
        seen.running++;
        seen.calls++;
        seen.max = Math.max(seen.max, seen.running);
        try {
          await sleep(20);
          yield { type: "text_delta" as const, text: "done" };
          return {
            fullText: "done",
            parts: [{ type: "text" as const, text: "done" }],
            usage: usage({ inputTokens: 10, outputTokens: 5 }),
          };
        } finally {
          seen.running--;
        }
      })();
    },
  };
  return { provider, seen };
}

interface Replica {
  harness: RuntimeHarness;
  metrics: ReturnType<typeof createMetrics>;
  server: TetherServer;
  sweeper: Sweeper;
  transport: Transport;
}

async function startReplica(
  provider: ModelProvider,
  ownerId: string,
  backend: { redis?: Redis | Cluster; namespace: string; shareWith?: RuntimeHarness },
): Promise<Replica> {
  const config = loadConfig(ENV);
  // The runtime (admission refusals) and the server (submission refusals) report to one registry.
  const metrics = createMetrics({
    defaultMetrics: false,
    labels: createMetricLabels({ tenants: ["acme", "strict"] }),
  });
  const harness = createRuntimeHarness({
    metrics,
    provider,
    ownerId,
    leaseTtlMs: 2_000,
    namespace: backend.namespace,
    ...(backend.redis && { redis: backend.redis }),
    ...(backend.shareWith && { shareWith: backend.shareWith }),
    quotas: { config: config.quotas, recheckMs: 50 },
  });
  const server = await createTetherServer({
    config,
    store: harness.store,
    logger: createLogger({ level: "silent" }),
    metrics,
    routes: (router) => routeTurnService(router, { runtime: harness.runtime }),
    quotas: harness.quotas,
  });
  const sweeper = startSweeper({
    driver: harness.runtime.driver,
    ready: harness.deps.ready,
    logger: silentLogger,
    intervalMs: 50,
  });
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` });
  return { harness, metrics, server, sweeper, transport };
}

async function collect(stream: AsyncIterable<{ event?: TurnEvent }>): Promise<TurnEvent[]> {
  const out: TurnEvent[] = [];
  for await (const r of stream) if (r.event) out.push(r.event);
  return out;
}

/** The details of a grpc-js error, read from its grpc-status-details-bin (google.rpc.Status). */
function statusDetails(error: grpc.ServiceError): Map<string, Uint8Array> {
  const [bin] = error.metadata.get("grpc-status-details-bin");
  const details = new Map<string, Uint8Array>();
  const status = new BinaryReader(bin as Buffer);
  while (status.pos < status.len) {
    const [field, wireType] = status.tag();
    if (field !== 3) {
      status.skip(wireType);
      continue;
    }
    const any = new BinaryReader(status.bytes());
    let typeUrl = "";
    let value: Uint8Array = new Uint8Array();
    while (any.pos < any.len) {
      const [f, w] = any.tag();
      if (f === 1) typeUrl = any.string();
      else if (f === 2) value = any.bytes();
      else any.skip(w);
    }
    details.set(typeUrl.slice(typeUrl.lastIndexOf("/") + 1), value);
  }
  return details;
}

const BACKENDS = [
  { name: "memory", connect: () => undefined },
  { name: "redis", connect: () => new Redis(inject("redisUrl")) },
  { name: "redis cluster", connect: () => connectCluster(inject("clusterPorts")) },
] as const;

for (const backend of BACKENDS) {
  describe(`tenant quotas over two replicas (${backend.name})`, () => {
    const { provider, seen } = recordingProvider();
    let redis: Redis | Cluster | undefined;
    let a: Replica;
    let b: Replica;

    beforeAll(async () => {
      redis = backend.connect();
      const namespace = `quotas-${backend.name.replace(" ", "-")}-${Date.now()}`;
      a = await startReplica(provider, "replica-a", { ...(redis && { redis }), namespace });
      b = await startReplica(provider, "replica-b", {
        ...(redis ? { redis } : { shareWith: a.harness }),
        namespace,
      });
    });

    afterAll(async () => {
      for (const r of [a, b]) {
        r.sweeper.stop();
        await r.harness.runtime.drain(2_000);
        await r.server.close();
      }
      await redis?.quit();
    });

    test("queue mode: never more running turns than the limit across both replicas; every input runs", async () => {
      const sessions = Array.from({ length: 8 }, (_, i) => `busy-${i}`);
      const streams = sessions.map((sessionId, i) =>
        collect(
          createClient(TurnService, (i % 2 === 0 ? a : b).transport).streamTurn(
            { sessionId, input: textInput(`input ${i}`) },
            auth("key-acme"),
          ),
        ),
      );
      const results = await Promise.all(streams);
      for (const events of results) {
        expect(events.at(-1)?.event.case).toBe("turnCompleted");
      }
      expect(seen.max).toBeLessThanOrEqual(CONCURRENT_TURNS);
      expect(seen.calls).toBe(8);
      // Eight sessions for two slots: some admissions were held back, and said so by tenant.
      const heldBack = async (r: Replica) =>
        metricValue(r.metrics.registry, "tether_quota_refusals_total", {
          tenant: "acme",
          limit: "concurrent_turns",
          where: "admission",
        });
      expect((await heldBack(a)) + (await heldBack(b))).toBeGreaterThan(0);
      // Nothing lost: each session committed exactly its one turn.
      for (const sessionId of sessions) {
        const snapshot = await a.harness.store.loadSession(`acme:${sessionId}` as SessionId);
        expect(snapshot?.turnIndex).toBe(1);
      }
      const usageNow = await createClient(QuotaService, b.transport).getQuotaUsage(
        {},
        auth("key-acme"),
      );
      expect(usageNow.tenant).toBe("acme");
      expect(usageNow.limits).toHaveLength(2);
      expect(usageNow.limits[0]).toMatchObject({
        kind: QuotaLimitKind.CONCURRENT_TURNS,
        mode: QuotaMode.QUEUE,
        limit: 2n,
        used: 0n,
        resetTimeUnixMs: 0n,
      });
      // Streams are limited for every tenant (ADR 0028): the default, none open now.
      expect(usageNow.limits[1]).toMatchObject({
        kind: QuotaLimitKind.CONCURRENT_STREAMS,
        mode: QuotaMode.REJECT,
        limit: 256n,
        used: 0n,
        resetTimeUnixMs: 0n,
      });
    });

    test("reject mode: RESOURCE_EXHAUSTED with QuotaFailure and RetryInfo, on Connect and grpc-js; GetQuotaUsage", async () => {
      const turns = createClient(TurnService, a.transport);
      const first = await collect(
        turns.streamTurn({ sessionId: "s-1", input: textInput("one") }, auth("key-strict")),
      );
      expect(first.at(-1)?.event.case).toBe("turnCompleted");

      const error = await expectCode(
        collect(
          turns.streamTurn({ sessionId: "s-2", input: textInput("two") }, auth("key-strict")),
        ),
        Code.ResourceExhausted,
      );
      expect(
        await metricValue(a.metrics.registry, "tether_quota_refusals_total", {
          tenant: "strict",
          limit: "turns_per_minute",
          where: "submission",
        }),
      ).toBe(1);
      const [failure] = error.findDetails(QuotaFailureSchema);
      expect(failure?.violations).toHaveLength(1);
      expect(failure?.violations[0]?.subject).toBe("strict");
      expect(failure?.violations[0]?.description).toContain("turns_per_minute");
      expect(failure?.violations[0]?.quotaValue).toBe(1n);
      const [retry] = error.findDetails(RetryInfoSchema);
      const delayMs =
        Number(retry?.retryDelay?.seconds ?? -1n) * 1000 + (retry?.retryDelay?.nanos ?? 0) / 1e6;
      expect(delayMs).toBeGreaterThan(0);
      expect(delayMs).toBeLessThanOrEqual(60_000);

      // The other replica answers the same (the counters are the store's), to grpc-js as well.
      const proto = protoLoader.loadSync("tether/v1/queue_service.proto", {
        includeDirs: [new URL("../../../proto/", import.meta.url).pathname],
      });
      const Queue = (grpc.loadPackageDefinition(proto).tether as grpc.GrpcObject)
        .v1 as grpc.GrpcObject;
      const Ctor = Queue.QueueService as grpc.ServiceClientConstructor;
      const client = new Ctor(`127.0.0.1:${b.server.port}`, grpc.credentials.createInsecure());
      const metadata = new grpc.Metadata();
      metadata.set("authorization", "Bearer key-strict");
      const grpcError = await new Promise<grpc.ServiceError>((resolve, reject) => {
        (client as unknown as Record<string, (...args: unknown[]) => void>).SubmitInput?.(
          { session_id: "s-3", delivery: { next_turn: {} }, payload: "{}" },
          metadata,
          (err: grpc.ServiceError | null) =>
            err ? resolve(err) : reject(new Error("SubmitInput was accepted")),
        );
      });
      client.close();
      expect(grpcError.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      const details = statusDetails(grpcError);
      const decoded = fromBinary(
        QuotaFailureSchema,
        details.get("google.rpc.QuotaFailure") ?? new Uint8Array(),
      );
      expect(decoded.violations[0]?.subject).toBe("strict");
      expect(decoded.violations[0]?.quotaId).toBe("turns_per_minute");
      const retryInfo = fromBinary(
        RetryInfoSchema,
        details.get("google.rpc.RetryInfo") ?? new Uint8Array(),
      );
      expect(Number(retryInfo.retryDelay?.seconds ?? -1n)).toBeGreaterThanOrEqual(0);
      expect(Number(retryInfo.retryDelay?.seconds ?? 61n)).toBeLessThanOrEqual(60);

      const quotas = createClient(QuotaService, b.transport);
      const report = await quotas.getQuotaUsage({ tenant: "strict" }, auth("key-strict"));
      expect(report.limits).toHaveLength(2);
      expect(report.limits[1]?.kind).toBe(QuotaLimitKind.CONCURRENT_STREAMS);
      expect(report.limits[0]).toMatchObject({
        kind: QuotaLimitKind.TURNS_PER_MINUTE,
        mode: QuotaMode.REJECT,
        limit: 1n,
        used: 1n,
      });
      expect(report.limits[0]?.resetTimeUnixMs).toBeGreaterThan(0n);
      await expectCode(
        quotas.getQuotaUsage({ tenant: "acme" }, auth("key-strict")),
        Code.PermissionDenied,
      );
      const enqueueRefusal = await expectCode(
        createClient(QueueService, a.transport).enqueueWork(
          {
            draft: {
              sessionId: "s-4",
              workClass: WorkClass.TURN_WORK,
              deliveryPolicy: DeliveryPolicy.EARLIEST_SAFE_BOUNDARY,
              slotPolicy: SlotPolicy.EXCLUSIVE,
              payload: "work",
            },
          },
          auth("key-strict"),
        ),
        Code.ResourceExhausted,
      );
      expect(enqueueRefusal.findDetails(QuotaFailureSchema)[0]?.violations[0]?.quotaId).toBe(
        "turns_per_minute",
      );
      expect(await a.harness.store.listWork("strict:s-4" as SessionId)).toEqual([]);
      // Nothing of the refused submissions was stored.
      expect(await a.harness.store.listInputs("strict:s-3" as SessionId)).toEqual([]);
      expect(await a.harness.store.loadSession("strict:s-2" as SessionId)).toBeUndefined();
    });
  });
}
