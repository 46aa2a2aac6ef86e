// What crosses the storage-slot port is validated once, here, for every backend.
import { invalidArgument } from "../../domain/errors.js";
import { checkId } from "../../domain/ids.js";
import { COUNTED_KINDS, type CountedKind } from "../../domain/storage-quotas.js";

export function checkKind(raw: unknown): CountedKind {
  if (!(COUNTED_KINDS as readonly unknown[]).includes(raw)) {
    throw invalidArgument("kind", `must be one of ${COUNTED_KINDS.join(", ")}`);
  }
  return raw as CountedKind;
}

export const checkSlotId = (raw: unknown): string => checkId("id", raw);

export function checkMax(raw: unknown): number {
  if (typeof raw !== "number" || !Number.isSafeInteger(raw) || raw < 1) {
    throw invalidArgument("max", "must be an integer of at least 1");
  }
  return raw;
}
