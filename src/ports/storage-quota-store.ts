// The storage-slot port (ADR 0029): per tenant and kind, the set of ids that hold a slot. A slot
// is taken before the create it admits and given back after the delete, each in one atomic step
// on the tenant's own keys (one Lua script on Redis, in the `{quota:<tenant>}` slot).
import type { CountedKind } from "../domain/storage-quotas.js";

/** `taken`: a new slot; `held`: this id already held one (a retry, counted once); `refused`: full. */
export type StorageSlotOutcome = "taken" | "held" | "refused";

export interface StorageQuotaStore {
  /** In one step: the id holds a slot already → held; else fewer than `max` held → taken; else refused (nothing changed). */
  takeStorageSlot(
    tenant: string,
    kind: CountedKind,
    id: string,
    max: number,
  ): Promise<StorageSlotOutcome>;
  /** False when the id held no slot. */
  releaseStorageSlot(tenant: string, kind: CountedKind, id: string): Promise<boolean>;
  /** The slots held now, per kind. */
  countStorageSlots(tenant: string): Promise<Record<CountedKind, number>>;
}
