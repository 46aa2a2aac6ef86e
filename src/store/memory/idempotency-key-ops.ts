// The idempotency-key port in memory: a map from a tenant's keyed create to its hash, id and
// expiry. Each claim runs to completion without awaiting, so it is one atomic step as the Redis
// script is; expired keys are dropped as claims pass them, so the map stays bounded in time.
import { idempotencyKeyConflict } from "../../domain/errors.js";
import { systemClock, type Clock } from "../../ports/clock.js";
import type { IdempotencyKeyStore } from "../../ports/idempotency-key-store.js";
import { withChecks } from "../shared/checked.js";
import { idempotencyKeyChecks } from "../shared/idempotency-key-checks.js";

interface HeldKey {
  requestHash: string;
  id: string;
  expiresAtMs: number;
}

export function createMemoryIdempotencyKeyStore(
  options: { clock?: Clock } = {},
): IdempotencyKeyStore {
  const clock = options.clock ?? systemClock;
  const held = new Map<string, HeldKey>();
  return withChecks(idempotencyKeyChecks, {
    claimIdempotencyKey(claim) {
      const now = clock.nowMs();
      // Oldest claims first (insertion order): drop the expired ones at the front.
      for (const [name, entry] of held) {
        if (entry.expiresAtMs > now) break;
        held.delete(name);
      }
      const name = `${claim.tenant}:${claim.create}:${claim.key}`;
      const seen = held.get(name);
      if (seen && seen.expiresAtMs > now) {
        if (seen.requestHash !== claim.requestHash) {
          return Promise.reject(idempotencyKeyConflict(claim.key));
        }
        return Promise.resolve({ id: seen.id, first: false });
      }
      held.delete(name);
      held.set(name, {
        requestHash: claim.requestHash,
        id: claim.id,
        expiresAtMs: now + claim.ttlMs,
      });
      return Promise.resolve({ id: claim.id, first: true });
    },
  });
}
