// Builds a runtime on the memory backend for tests: memory store, log and signals, one bus.
import { DEFAULT_PARKED_TURN_TTL_MS } from "../../src/domain/parked-turns.js";
import type { FenceAuthority } from "../../src/store/memory/event-log.js";
import { systemClock } from "../../src/ports/clock.js";
import { createTranscriptCache } from "../../src/runtime/turn/transcript-cache.js";
import type { SessionId } from "../../src/domain/ids.js";
import type { CursoredEvent } from "../../src/domain/session-events.js";
import type { ModelProvider } from "../../src/ports/model-provider.js";
import type { RuntimeStore, StoreLimits } from "../../src/ports/runtime-store.js";
import { systemSleep } from "../../src/ports/sleep.js";
import type { SelectableTools } from "../../src/ports/turn-tools.js";
import type { ToolExecutor } from "../../src/ports/tool-executor.js";
import type { Tracer } from "../../src/ports/tracer.js";
import {
  createOutboxHints,
  silentLogger,
  type RuntimeDeps,
  type RuntimeLogger,
  type RuntimeMetrics,
} from "../../src/runtime/deps.js";
import {
  createTetherRuntime,
  type StreamTurnCommand,
  type TetherRuntime,
} from "../../src/runtime/runtime.js";
import { createSessionBus } from "../../src/runtime/stream/session-bus.js";
import { createMemoryEventLog } from "../../src/store/memory/event-log.js";
import { createMemorySignals } from "../../src/store/memory/signals.js";
import { createMemoryStore } from "../../src/store/memory/memory-store.js";
import type { EventLog } from "../../src/ports/event-log.js";
import type { ReadyIndex } from "../../src/ports/ready-index.js";
import type { BudgetPolicy, TenantBudgetStore } from "../../src/ports/budget-guard.js";
import { randomUUID } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import { createRedisEventLog } from "../../src/store/redis/event-log.js";
import { createRedisSignals } from "../../src/store/redis/signals.js";
import { createRedisReadyIndex } from "../../src/store/redis/ready-index.js";
import { createMemoryReadyIndex } from "../../src/store/memory/ready-index.js";
import { createProcLivenessProbe } from "../../src/store/shared/local-process.js";
import { createRedisStore, type RedisStore } from "../../src/store/redis/index.js";
import type { QuotaConfig } from "../../src/domain/quotas.js";
import type { QuotaStore } from "../../src/ports/quota-store.js";
import { createMemoryQuotaStore } from "../../src/store/memory/quota-ops.js";
import { createRedisQuotaStore } from "../../src/store/redis/quota-ops.js";
import type { ScheduleStore } from "../../src/ports/schedule-store.js";
import { createMemoryScheduleStore } from "../../src/store/memory/schedule-ops.js";
import { createRedisScheduleStore } from "../../src/store/redis/schedule-ops.js";
import type { WebhookStore } from "../../src/ports/webhook-store.js";
import { createRedisWebhookStore } from "../../src/store/redis/webhook-ops.js";
import type { MemoryStore } from "../../src/store/memory/memory-store.js";

export interface RuntimeHarness {
  runtime: TetherRuntime;
  store: RuntimeStore;
  log: EventLog;
  deps: RuntimeDeps;
  /** The tenant quota counters of the backend (shared like the store). */
  quotas: QuotaStore;
  /** The schedules of the backend (shared like the store). */
  schedules: ScheduleStore;
  /** The webhook outboxes and endpoints of the backend; wired into the runtime with `webhooks`. */
  webhooks: WebhookStore;
}

export interface RuntimeHarnessOptions {
  provider: ModelProvider;
  serverTools?: ToolExecutor;
  /** Tool servers (MCP) turns select from. */
  selectableTools?: SelectableTools;
  leaseTtlMs?: number;
  clientToolTimeoutMs?: number;
  /** At most this many turn starts per event-loop iteration (unset: no pacing). */
  turnStartsPerIteration?: number;
  /** When a waiting turn parks (default 2000 ms, as in production). */
  parkAfterMs?: number;
  parkedTurnTtlMs?: number;
  maxParkedProgressBytes?: number;
  approvalRequiredTools?: string[];
  logMaxEntries?: number;
  /** Use the Redis backend on this connection (a fresh namespace each time); memory otherwise. */
  redis?: Redis | Cluster;
  /** Share one Redis namespace between harnesses: several replicas of one deployment. */
  namespace?: string;
  /** This replica's lease identity. */
  ownerId?: string;
  /** The store's limits (its defaults otherwise). */
  limits?: Partial<StoreLimits>;
  /** Interposes on the store (fault injection). */
  wrapStore?: (store: RuntimeStore) => RuntimeStore;
  /** Interposes on the event log (fault injection). */
  wrapLog?: (log: EventLog) => EventLog;
  /** Interposes on the ready index (to see or order its writes). */
  wrapReady?: (ready: ReadyIndex) => ReadyIndex;
  /** Hears the runtime's log records (silent by default). */
  logger?: RuntimeLogger;
  /**
   * Another replica of the same memory deployment: its store, log, signals, ready index and
   * quota counters are shared (Redis replicas share a namespace instead).
   */
  shareWith?: RuntimeHarness;
  /** Tenant quotas (ADR 0015), with how long a refused turn waits at most before a new look. */
  quotas?: { config: QuotaConfig; recheckMs?: number };
  /** Receives the runtime's metrics (none by default). */
  metrics?: RuntimeMetrics;
  /** Traces turns (src/telemetry); untraced by default. */
  tracer?: Tracer;
  /** Model prices and tenant budgets (ADR 0016), charged in the harness's own store. */
  budgets?: Omit<BudgetPolicy, "store">;
  /** Commits and parks write webhook events (ADR 0021); off by default. */
  webhooks?: boolean;
}

export function createRuntimeHarness(options: RuntimeHarnessOptions): RuntimeHarness {
  const maxEntries = options.logMaxEntries ?? 10_000;
  const namespace = options.namespace ?? `rt-${randomUUID()}`;
  const { redis } = options;
  const limits = options.limits && { limits: options.limits };
  const shared = options.shareWith;
  const memory = redis || shared ? undefined : createMemoryStore({ ...limits });
  const redisStore =
    shared || memory
      ? undefined
      : createRedisStore({
          redis: redis as Redis | Cluster,
          namespace,
          logMaxEntries: maxEntries,
          ...limits,
        });
  const backing = shared?.store ?? memory ?? (redisStore as RedisStore);
  const signals = redis
    ? createRedisSignals({ redis, namespace })
    : (shared?.deps.signals ?? createMemorySignals());
  // The store's submit tells the signals of each new steer, as build-store wires it (ADR 0041).
  const steerNotice = shared ? undefined : signals.steerNotice?.();
  if (steerNotice) (memory ?? redisStore)?.attachSteerNotices(steerNotice);
  const store = options.wrapStore ? options.wrapStore(backing) : backing;
  const memoryLog =
    memory && createMemoryEventLog({ maxEntries, fences: fenceAuthorityOf(store, memory) });
  // A turn's commit appends its turn_completed in the same step (ADR 0011), as build-store wires it.
  if (memory && memoryLog) memory.attachEventLog(memoryLog);
  const backingLog = redis
    ? createRedisEventLog({ redis, namespace, maxEntries })
    : (shared?.log ?? memoryLog ?? createMemoryEventLog({ maxEntries }));
  const log = options.wrapLog ? options.wrapLog(backingLog) : backingLog;
  const quotas =
    shared?.quotas ??
    (redis
      ? createRedisQuotaStore({ redis, namespace })
      : createMemoryQuotaStore({ clock: systemClock }));
  // A memory store's commit charges the quota store it was given (ADR 0038), as build-store wires it.
  if (memory && !shared?.quotas) memory.attachQuotas(quotas);
  const schedules =
    shared?.schedules ??
    (redis
      ? createRedisScheduleStore({ redis, namespace })
      : createMemoryScheduleStore({ clock: systemClock }));
  const webhooks =
    shared?.webhooks ??
    (redis ? createRedisWebhookStore({ redis, namespace }) : (backing as MemoryStore).webhooks);
  const deps: RuntimeDeps = {
    store,
    clock: systemClock,
    transcripts: createTranscriptCache(store),
    log,
    signals,
    ready: (options.wrapReady ?? ((ready: ReadyIndex) => ready))(
      redis
        ? createRedisReadyIndex({ redis, namespace })
        : (shared?.deps.ready ?? createMemoryReadyIndex()),
    ),
    liveness: createProcLivenessProbe(),
    bus: createSessionBus(),
    provider: options.provider,
    ...(options.serverTools ? { serverTools: options.serverTools } : {}),
    ...(options.selectableTools && { selectableTools: options.selectableTools }),
    sleep: systemSleep,
    owner: {
      ownerId: options.ownerId ?? "test-replica",
      incarnationId: `${options.ownerId ?? "test-replica"}:1`,
      liveness: { kind: "opaque" },
    },
    leaseTtlMs: options.leaseTtlMs ?? 5_000,
    clientToolTimeoutMs: options.clientToolTimeoutMs ?? 5_000,
    ...(options.turnStartsPerIteration !== undefined && {
      turnStartsPerIteration: options.turnStartsPerIteration,
    }),
    parking: {
      afterMs: options.parkAfterMs ?? 2_000,
      ttlMs: options.parkedTurnTtlMs ?? DEFAULT_PARKED_TURN_TTL_MS,
      maxProgressBytes: options.maxParkedProgressBytes ?? 1024 * 1024,
    },
    ...(options.approvalRequiredTools && { approvalRequiredTools: options.approvalRequiredTools }),
    defaults: {},
    ...(options.budgets && { budgets: { ...options.budgets, store: tenantSpendOf(backing) } }),
    logger: options.logger ?? silentLogger,
    ...(options.quotas && {
      quotas: {
        store: quotas,
        config: options.quotas.config,
        ...(options.quotas.recheckMs !== undefined && { recheckMs: options.quotas.recheckMs }),
      },
    }),
    ...(options.metrics && { metrics: options.metrics }),
    ...(options.tracer && { tracer: options.tracer }),
    // Hints a minute ahead, as a replica's default delivery lease (ADR 0021 "The hint").
    ...(options.webhooks === true && {
      webhooks: createOutboxHints(webhooks, systemClock, 60_000),
    }),
  };
  return {
    runtime: createTetherRuntime(deps),
    ...{ store, log, deps, quotas, schedules, webhooks },
  };
}

/** The tenant spend counters of a memory or Redis store (both keep them beside the store port). */
function tenantSpendOf(store: RuntimeStore): TenantBudgetStore {
  const spend = store as RuntimeStore & Partial<TenantBudgetStore>;
  if (typeof spend.chargeTenantSpend !== "function") throw new Error("no tenant spend counters");
  return spend as TenantBudgetStore;
}

export function textCommand(
  sessionId: string,
  text: string,
  extra: Partial<StreamTurnCommand> = {},
): StreamTurnCommand {
  return {
    sessionId: sessionId as SessionId,
    publicSessionId: sessionId,
    items: [{ type: "text", text }],
    busyStrategy: "enqueue",
    clientTools: [],
    settings: {},
    ...extra,
  };
}

export async function collect(events: AsyncIterable<CursoredEvent>): Promise<CursoredEvent[]> {
  const out: CursoredEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

export function textOf(events: readonly CursoredEvent[]): string {
  return events.map((e) => (e.event.type === "text_delta" ? e.event.text : "")).join("");
}

/** The leases appends are checked against: the store the runtime uses when it can answer. */
function fenceAuthorityOf(
  store: RuntimeStore,
  backing: FenceAuthority | undefined,
): FenceAuthority {
  const own = store as Partial<FenceAuthority>;
  if (typeof own.fenceIsLive === "function") return store as RuntimeStore & FenceAuthority;
  if (backing) return backing;
  throw new Error("a memory event log needs a memory store to check fences against");
}
