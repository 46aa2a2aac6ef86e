// The Redis store: the RuntimeStore port on ioredis, one Lua script per atomic operation.
// Works on a standalone Redis and on Redis Cluster (every script stays in one session's slot).
import type { Cluster, Redis } from "ioredis";
import type { LivenessProbe } from "../../ports/liveness-probe.js";
import {
  DEFAULT_STORE_LIMITS,
  type RuntimeStore,
  type StoreLimits,
} from "../../ports/runtime-store.js";
import { createProcLivenessProbe } from "../shared/local-process.js";
import type { StoreLogger } from "../shared/store-log.js";
import * as commits from "./commit-ops.js";
import { createRedisContext } from "./context.js";
import * as inputs from "./input-ops.js";
import { checkNamespace } from "./keys.js";
import * as leases from "./lease-ops.js";
import * as queue from "./queue-ops.js";
import { createScriptRunner } from "./scripts.js";
import * as sessions from "./session-ops.js";

export interface RedisStoreOptions {
  /** A connection the caller owns: the store defines its scripts on it but never closes it. */
  redis: Redis | Cluster;
  /** Key prefix; several stores may share one Redis under different namespaces. */
  namespace?: string;
  limits?: Partial<StoreLimits>;
  livenessProbe?: LivenessProbe;
  /** Decision records: lease claims, reclaims, renewal and fencing refusals. None by default. */
  logger?: StoreLogger;
}

export function createRedisStore(options: RedisStoreOptions): RuntimeStore {
  const namespace = checkNamespace(options.namespace ?? "tether");
  const limits: StoreLimits = { ...DEFAULT_STORE_LIMITS, ...options.limits };
  const probe = options.livenessProbe ?? createProcLivenessProbe();
  const ctx = createRedisContext(
    options.redis,
    createScriptRunner(options.redis),
    namespace,
    limits,
    probe,
    options.logger,
  );
  return {
    commit: (c) => commits.commit(ctx, c),
    loadSession: (id) => commits.loadSession(ctx, id),
    deleteSession: (id) => sessions.deleteSession(ctx, id),
    listSessions: (o) => sessions.listSessions(ctx, o),
    tryClaimLease: (id, owner, ttl) => leases.tryClaimLease(ctx, id, owner, ttl),
    renewLease: (fence, ttl) => leases.renewLease(ctx, fence, ttl),
    releaseLease: (fence) => leases.releaseLease(ctx, fence),
    reclaimLease: (id, claimant, observed, ttl) =>
      leases.reclaimLease(ctx, id, claimant, observed, ttl),
    currentLease: (id) => leases.currentLease(ctx, id),
    enqueueWork: (draft) => queue.enqueueWork(ctx, draft),
    listWork: (id) => queue.listWork(ctx, id),
    cancelWork: (id, ids) => queue.cancelWork(ctx, id, ids),
    claimReadyWork: (fence, boundary, max) => queue.claimReadyWork(ctx, fence, boundary, max),
    claimWorkByIds: (fence, ids) => queue.claimWorkByIds(ctx, fence, ids),
    submitInput: (draft) => inputs.submitInput(ctx, draft),
    listInputs: (id) => inputs.listInputs(ctx, id),
    cancelInputs: (id, selector) => inputs.cancelInputs(ctx, id, selector),
    claimInputs: (fence, point, max) => inputs.claimInputs(ctx, fence, point, max),
    deferActiveInputs: (fence, turnId) => inputs.deferActiveInputs(ctx, fence, turnId),
    vacuum: (id) => sessions.vacuum(ctx, id),
    // The connection belongs to the caller (it may serve other stores or other code), so close
    // releases nothing of it; the caller quits it after closing the store.
    close: () => Promise.resolve(),
  };
}
