// What crosses the storage-slot port is validated once, here, for every backend (its check table,
// ADR 0034).
import { invalidArgument } from "../../domain/errors.js";
import { checkId } from "../../domain/ids.js";
import { COUNTED_KINDS, type CountedKind } from "../../domain/storage-quotas.js";
import type { StorageQuotaStore } from "../../ports/storage-quota-store.js";
import type { CheckTable } from "./checked.js";
import { checkTenant } from "./quota-checks.js";

function checkKind(raw: unknown): CountedKind {
  if (!(COUNTED_KINDS as readonly unknown[]).includes(raw)) {
    throw invalidArgument("kind", `must be one of ${COUNTED_KINDS.join(", ")}`);
  }
  return raw as CountedKind;
}

const checkSlotId = (raw: unknown): string => checkId("id", raw);

function checkMax(raw: unknown): number {
  if (typeof raw !== "number" || !Number.isSafeInteger(raw) || raw < 1) {
    throw invalidArgument("max", "must be an integer of at least 1");
  }
  return raw;
}

export const storageQuotaChecks = {
  takeStorageSlot: (tenant, kind, id, max) => {
    checkTenant(tenant);
    checkKind(kind);
    checkSlotId(id);
    checkMax(max);
  },
  releaseStorageSlot: (tenant, kind, id) => {
    checkTenant(tenant);
    checkKind(kind);
    checkSlotId(id);
  },
  countStorageSlots: checkTenant,
} satisfies CheckTable<StorageQuotaStore>;
