// What crosses the idempotency-key port is validated once, here, for every backend (its check
// table, ADR 0034).
import { invalidArgument } from "../../domain/errors.js";
import { checkId } from "../../domain/ids.js";
import type { IdempotencyKeyStore, KeyedCreate } from "../../ports/idempotency-key-store.js";
import type { CheckTable } from "./checked.js";
import { checkTenant } from "./quota-checks.js";

const CREATES: readonly KeyedCreate[] = [
  "agents.create",
  "agents.update",
  "sessions.create",
  "automations.create",
  "automations.invoke",
];

export const idempotencyKeyChecks: CheckTable<IdempotencyKeyStore> = {
  claimIdempotencyKey: (claim) => {
    if (typeof claim !== "object" || claim === null) {
      throw invalidArgument("claim", "must be an object");
    }
    checkTenant(claim.tenant);
    if (!CREATES.includes(claim.create)) {
      throw invalidArgument("create", `must be one of ${CREATES.join(", ")}`);
    }
    checkId("key", claim.key);
    if (typeof claim.requestHash !== "string" || !/^[0-9a-f]{64}$/u.test(claim.requestHash)) {
      throw invalidArgument("request_hash", "must be 64 lowercase hex digits (a SHA-256)");
    }
    checkId("id", claim.id);
    if (!Number.isSafeInteger(claim.ttlMs) || claim.ttlMs < 1) {
      throw invalidArgument("ttl_ms", "must be an integer of at least 1");
    }
  },
};
