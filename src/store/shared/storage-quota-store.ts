// Per-tenant storage limits around any store (ADR 0029). A create takes the tenant's slot for
// the id first (one atomic step on the tenant's keys, refused past the limit with nothing
// written), then writes; a delete writes, then gives the slot back. The id is the slot, so a
// retried create is counted once. Two steps because a session's (or agent's) keys and its
// tenant's are in different slots on Redis Cluster: a crash between them over-counts, never
// under-counts, and the next create or delete of that id mends it.
import { isTetherError } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import { tenantOfSession } from "../../domain/quotas.js";
import type { RuntimeCommit } from "../../domain/session.js";
import {
  storageQuotaExhausted,
  type CountedKind,
  type StorageLimits,
} from "../../domain/storage-quotas.js";
import type { RuntimeStore } from "../../ports/runtime-store.js";
import type { ScheduleStore } from "../../ports/schedule-store.js";
import type { StorageQuotaStore } from "../../ports/storage-quota-store.js";
import type { WebhookStore } from "../../ports/webhook-store.js";

export interface StorageQuotaOptions {
  slots: StorageQuotaStore;
  limitsOf(tenant: string): StorageLimits;
}

/** Errors after which the write may have happened: the slot is kept (over-counting is safe). */
const UNKNOWN_OUTCOME = new Set(["store_unavailable", "replication_unconfirmed", "internal"]);

/**
 * Runs `create` under a slot of `kind` for `id`. Refused: quota_exhausted, nothing written,
 * unless `exists` finds the id already there (created before its tenant's slots were kept).
 * A create that fails for sure gives a slot it took back unless the id exists after all.
 */
async function underSlot<R>(
  options: StorageQuotaOptions,
  at: { tenant: string; kind: CountedKind; id: string },
  exists: () => Promise<boolean>,
  create: () => Promise<R>,
): Promise<R> {
  const max = options.limitsOf(at.tenant)[at.kind];
  const outcome = await options.slots.takeStorageSlot(at.tenant, at.kind, at.id, max);
  if (outcome === "refused" && !(await exists())) {
    throw storageQuotaExhausted(at.tenant, at.kind, max);
  }
  try {
    return await create();
  } catch (error) {
    const unknown = !isTetherError(error) || UNKNOWN_OUTCOME.has(error.code);
    if (outcome === "taken" && !unknown && !(await exists())) {
      await options.slots.releaseStorageSlot(at.tenant, at.kind, at.id);
    }
    throw error;
  }
}

/** A commit that patches metadata carries its tenant's metadata limits to the store's step. */
function withMetadataLimits(commit: RuntimeCommit, options: StorageQuotaOptions): RuntimeCommit {
  if (!commit?.metadataPatch || commit.metadataLimits || typeof commit.sessionId !== "string") {
    return commit;
  }
  const limits = options.limitsOf(tenantOfSession(commit.sessionId));
  return {
    ...commit,
    metadataLimits: {
      maxBytes: limits.session_metadata_bytes,
      maxHistoryBytes: limits.metadata_history_bytes,
    },
  };
}

/** Sessions (every way one is created: commit at head 0, input, work, turn start, fork), agents. */
export function withStorageQuotas<T extends RuntimeStore>(
  inner: T,
  options: StorageQuotaOptions,
): T {
  const sessionExists = (id: SessionId) => async () =>
    (await inner.readSessionSummaries([id])).length > 0;
  const asSession = <R>(id: SessionId, create: () => Promise<R>): Promise<R> => {
    // A malformed id is the inner store's to refuse, with its own field name.
    if (typeof id !== "string") return create();
    const at = { tenant: tenantOfSession(id), kind: "sessions" as const, id };
    return underSlot(options, at, sessionExists(id), create);
  };
  const agentExists = (id: string) => async () => (await inner.getAgent(id)) !== undefined;
  const startTurn = inner.startTurn?.bind(inner);
  return {
    ...inner,
    commit: (raw: RuntimeCommit) => {
      const commit = withMetadataLimits(raw, options);
      return commit?.expectedHeadRevision === 0
        ? asSession(commit.sessionId, () => inner.commit(commit))
        : inner.commit(commit);
    },
    submitInput: (draft) => asSession(draft?.sessionId, () => inner.submitInput(draft)),
    enqueueWork: (draft) => asSession(draft?.sessionId, () => inner.enqueueWork(draft)),
    ...(startTurn && {
      startTurn: async (draft, claim) => {
        // A session with a commit holds its slot (taken before the create, given back only
        // after the delete): the step itself checks the commit, so a turn on it is one step.
        // No commit: nothing changed, and the slot is taken as for any create.
        if (typeof draft?.sessionId === "string" && claim) {
          try {
            return await startTurn(draft, { ...claim, committedOnly: true });
          } catch (error) {
            if (!isTetherError(error, "session_not_found")) throw error;
          }
        }
        return asSession(draft?.sessionId, () => startTurn(draft, claim));
      },
    }),
    forkSession: (draft) => asSession(draft?.targetId, () => inner.forkSession(draft)),
    deleteSession: async (id) => {
      const deleted = await inner.deleteSession(id);
      // Also when nothing was there: a slot left by a create that never landed is mended.
      await options.slots.releaseStorageSlot(tenantOfSession(id), "sessions", id);
      return deleted;
    },
    createAgent: (draft) => {
      const id = draft?.agentId;
      if (typeof id !== "string") return inner.createAgent(draft);
      const at = { tenant: tenantOfSession(id as SessionId), kind: "agents" as const, id };
      return underSlot(options, at, agentExists(id), () => inner.createAgent(draft));
    },
    deleteAgent: async (id) => {
      const deleted = await inner.deleteAgent(id);
      await options.slots.releaseStorageSlot(tenantOfSession(id as SessionId), "agents", id);
      return deleted;
    },
  };
}

export function withScheduleQuotas(
  inner: ScheduleStore,
  options: StorageQuotaOptions,
): ScheduleStore {
  return {
    ...inner,
    createSchedule: (draft) => {
      const at = { tenant: draft.tenant, kind: "schedules" as const, id: draft.scheduleId };
      const exists = async () => (await inner.getSchedule(draft)) !== undefined;
      return underSlot(options, at, exists, () => inner.createSchedule(draft));
    },
    deleteSchedule: async (ref) => {
      const deleted = await inner.deleteSchedule(ref);
      await options.slots.releaseStorageSlot(ref.tenant, "schedules", ref.scheduleId);
      return deleted;
    },
  };
}

/** Endpoints are counted in the create's own step (one tenant hash): only the limit is added. */
export function withEndpointQuotas(
  inner: WebhookStore,
  options: Pick<StorageQuotaOptions, "limitsOf">,
): WebhookStore {
  return {
    ...inner,
    createEndpoint: (draft, max) =>
      inner.createEndpoint(draft, max ?? options.limitsOf(draft.tenant).webhook_endpoints),
  };
}
