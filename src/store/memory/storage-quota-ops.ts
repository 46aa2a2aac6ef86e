// The storage-slot port in memory (ADR 0029): per tenant and kind, a set of ids. Every operation
// runs to completion without awaiting, so each is one atomic step as the Redis scripts are.
import { COUNTED_KINDS, type CountedKind } from "../../domain/storage-quotas.js";
import type { StorageQuotaStore } from "../../ports/storage-quota-store.js";
import { withChecks } from "../shared/checked.js";
import { storageQuotaChecks } from "../shared/storage-quota-checks.js";

export function createMemoryStorageQuotaStore(): StorageQuotaStore {
  const slots = new Map<string, Set<string>>();
  const setOf = (tenant: string, kind: CountedKind): Set<string> => {
    const key = `${tenant}\n${kind}`;
    let set = slots.get(key);
    if (!set) {
      set = new Set();
      slots.set(key, set);
    }
    return set;
  };
  return withChecks(storageQuotaChecks, {
    takeStorageSlot(tenant, kind, id, max) {
      const set = setOf(tenant, kind);
      if (set.has(id)) return Promise.resolve("held");
      if (set.size >= max) return Promise.resolve("refused");
      set.add(id);
      return Promise.resolve("taken");
    },
    releaseStorageSlot(tenant, kind, id) {
      return Promise.resolve(setOf(tenant, kind).delete(id));
    },
    countStorageSlots(tenant) {
      const counts = {} as Record<CountedKind, number>;
      for (const kind of COUNTED_KINDS) counts[kind] = setOf(tenant, kind).size;
      return Promise.resolve(counts);
    },
  });
}
