// The storage-slot port on Redis (ADR 0029): per tenant and kind a set of ids under the tenant's
// quota hash tag `{quota:<tenant>}`; one script call per operation.
import type { Cluster, Redis } from "ioredis";
import { COUNTED_KINDS, type CountedKind } from "../../domain/storage-quotas.js";
import type { StorageQuotaStore } from "../../ports/storage-quota-store.js";
import { withChecks } from "../shared/checked.js";
import { storageQuotaChecks } from "../shared/storage-quota-checks.js";
import { checkNamespace, storageSlotsKey } from "./keys.js";
import { REPLY } from "./replies.js";
import { createScriptRunner } from "./scripts.js";

export function createRedisStorageQuotaStore(options: {
  redis: Redis | Cluster;
  namespace?: string;
}): StorageQuotaStore {
  const namespace = checkNamespace(options.namespace ?? "tether");
  const scripts = createScriptRunner(options.redis);
  const key = (tenant: string, kind: CountedKind) => storageSlotsKey(namespace, tenant, kind);
  return withChecks(storageQuotaChecks, {
    async takeStorageSlot(tenant, kind, id, max) {
      const k = key(tenant, kind);
      const reply = await scripts.run("takeStorageSlot", [k], [id, max]);
      if (reply[0] === REPLY.QUOTA_REFUSED) return "refused";
      return reply[1] === 1 ? "taken" : "held";
    },
    async releaseStorageSlot(tenant, kind, id) {
      const k = key(tenant, kind);
      const reply = await scripts.run("releaseStorageSlot", [k], [id]);
      return reply[1] === 1;
    },
    async countStorageSlots(tenant) {
      const keys = COUNTED_KINDS.map((kind) => key(tenant, kind));
      const reply = await scripts.run("countStorageSlots", keys, []);
      const counts = {} as Record<CountedKind, number>;
      COUNTED_KINDS.forEach((kind, i) => (counts[kind] = Number(reply[i + 1])));
      return counts;
    },
  });
}
