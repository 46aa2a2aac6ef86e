// Idempotency-Keys of the front door's creates (ADR 0037): a tenant's key for one kind of create
// names one id for its time to live; a claim with the same request hash gets that id, another
// hash is source_key_conflict and changes nothing; racing claims agree on one id. Runs on memory,
// Redis and Redis Cluster; not on the wire (the door's own port).
import { createHash, randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import type {
  IdempotencyKeyClaim,
  IdempotencyKeyStore,
} from "../../../src/ports/idempotency-key-store.js";
import { expectTetherError } from "../support/expectations.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const hashOf = (body: string) => createHash("sha256").update(body).digest("hex");
const HOUR_MS = 3_600_000;

export function describeIdempotencyKeyLaws(factory: StoreFactory): void {
  describe("idempotency keys", () => {
    const harness = useStoreHarness(factory);
    const keysOf = (): IdempotencyKeyStore => {
      const store = harness().idempotencyKeys;
      if (!store) throw new Error("this backend has no idempotency-key store");
      return store;
    };
    const claim = (over: Partial<IdempotencyKeyClaim> = {}): IdempotencyKeyClaim => ({
      tenant: "t1",
      create: "sessions.create",
      key: `k-${randomUUID()}`,
      requestHash: hashOf("body"),
      id: `sess_${randomUUID()}`,
      ttlMs: HOUR_MS,
      ...over,
    });

    test("a key names the first claim's id; the same hash gets it again, another is a conflict", async () => {
      const keys = keysOf();
      const first = claim();
      expect(await keys.claimIdempotencyKey(first)).toEqual({ id: first.id, first: true });
      const retry = { ...first, id: "sess_other" };
      expect(await keys.claimIdempotencyKey(retry)).toEqual({ id: first.id, first: false });
      const error = await expectTetherError(
        () => keys.claimIdempotencyKey({ ...retry, requestHash: hashOf("another body") }),
        "source_key_conflict",
      );
      expect(error.message).toContain(first.key);
      // The conflict changed nothing: the key still names the first id.
      expect(await keys.claimIdempotencyKey(retry)).toEqual({ id: first.id, first: false });
    });

    test("a key is scoped by tenant and by kind of create", async () => {
      const keys = keysOf();
      const base = claim();
      await keys.claimIdempotencyKey(base);
      const otherTenant = { ...base, tenant: "t2", id: "sess_t2", requestHash: hashOf("x") };
      expect(await keys.claimIdempotencyKey(otherTenant)).toEqual({ id: "sess_t2", first: true });
      const agents = { ...base, create: "agents.create" as const, id: "agent_a" };
      expect(await keys.claimIdempotencyKey(agents)).toEqual({ id: "agent_a", first: true });
    });

    test("a key expires after its time to live: then it names a new id", async () => {
      const keys = keysOf();
      const first = claim({ ttlMs: 40 });
      await keys.claimIdempotencyKey(first);
      await harness().advanceTime(80);
      const later = { ...first, id: "sess_later", requestHash: hashOf("other") };
      expect(await keys.claimIdempotencyKey(later)).toEqual({ id: "sess_later", first: true });
    });

    test("racing claims of one key agree on one id, and exactly one is first", async () => {
      const keys = keysOf();
      const base = claim();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => keys.claimIdempotencyKey({ ...base, id: `sess_${i}` })),
      );
      expect(new Set(answers.map((a) => a.id)).size).toBe(1);
      expect(answers.filter((a) => a.first)).toHaveLength(1);
    });

    test("bad claims are refused naming the field, and hold nothing", async () => {
      const keys = keysOf();
      const base = claim();
      const refused = [
        [{ ...base, key: "has space" }, "key"],
        [{ ...base, requestHash: "not-hex" }, "request_hash"],
        [{ ...base, ttlMs: 0 }, "ttl_ms"],
        [{ ...base, id: "" }, "id"],
        [{ ...base, create: "schedules.create" as never }, "create"],
      ] as const;
      for (const [bad, field] of refused) {
        const error = await expectTetherError(
          () => keys.claimIdempotencyKey(bad),
          "invalid_argument",
        );
        expect(error.violations.map((v) => v.field)).toContain(field);
      }
      expect((await keys.claimIdempotencyKey(base)).first).toBe(true);
    });
  });
}
