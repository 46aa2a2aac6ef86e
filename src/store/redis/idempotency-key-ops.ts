// The idempotency-key port on Redis (ADR 0037): one expiring string per tenant, kind of create and
// key; one script call per claim, confirmed like the create it protects (durability.ts).
import type { Cluster, Redis } from "ioredis";
import { idempotencyKeyConflict } from "../../domain/errors.js";
import type { IdempotencyKeyStore } from "../../ports/idempotency-key-store.js";
import { withChecks } from "../shared/checked.js";
import { idempotencyKeyChecks } from "../shared/idempotency-key-checks.js";
import { ASYNC_DURABILITY, withDurability, type RedisDurability } from "./durability.js";
import { checkNamespace, idempotencyKeyKey } from "./keys.js";
import { REPLY } from "./replies.js";
import { createScriptRunner } from "./scripts.js";

export function createRedisIdempotencyKeyStore(options: {
  redis: Redis | Cluster;
  namespace?: string;
  durability?: RedisDurability;
}): IdempotencyKeyStore {
  const namespace = checkNamespace(options.namespace ?? "tether");
  const scripts = withDurability(
    createScriptRunner(options.redis),
    options.durability ?? ASYNC_DURABILITY,
  );
  return withChecks(idempotencyKeyChecks, {
    async claimIdempotencyKey(claim) {
      const key = idempotencyKeyKey(namespace, claim.tenant, claim.create, claim.key);
      const reply = await scripts.run(
        "claimIdempotencyKey",
        [key],
        [claim.requestHash, claim.id, claim.ttlMs],
      );
      if (reply[0] === REPLY.SOURCE_KEY_CONFLICT) throw idempotencyKeyConflict(claim.key);
      return { id: String(reply[1]), first: reply[2] === 1 };
    },
  });
}
