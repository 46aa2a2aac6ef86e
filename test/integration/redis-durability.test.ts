// TETHER_REDIS_DURABILITY on a real primary with one replica: `replicated` returns an
// acknowledgement only once the replica has the write; with the replica stopped (SIGSTOP) the
// call fails replication_unconfirmed (UNAVAILABLE), and the retry with the same idempotency key
// after the replica resumes succeeds without a duplicate. `async` acknowledges regardless.
import { Code } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATUS_OF } from "../../src/api/errors.js";
import { TetherError } from "../../src/domain/errors.js";
import { createRedisStore } from "../../src/store/redis/index.js";
import type { RedisDurability } from "../../src/store/redis/durability.js";
import {
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
} from "../conformance/support/fixtures.js";
import { startRedis, type RedisProcess } from "../support/redis-harness.js";
import { freshNamespace } from "../support/redis-store-factory.js";
import { waitFor } from "../support/wait-for.js";

const REPLICATED: RedisDurability = { mode: "replicated", minReplicas: 1, timeoutMs: 300 };
let primary: RedisProcess;
let replica: RedisProcess;
let conn: Redis;
let replicaConn: Redis;
const extra: Redis[] = [];

function duplicate(redis: Redis): Redis {
  const copy = redis.duplicate();
  extra.push(copy);
  return copy;
}

/** The primary counts the replica for WAIT only once it is online there and acknowledging. */
async function linkUp(): Promise<boolean> {
  return /slave0:.*state=online/u.test(await conn.info("replication"));
}

beforeAll(async () => {
  primary = await startRedis(["--repl-diskless-sync-delay", "0"]);
  replica = await startRedis(["--replicaof", "127.0.0.1", String(primary.port)]);
  conn = new Redis({ port: primary.port, host: "127.0.0.1", maxRetriesPerRequest: 2 });
  replicaConn = new Redis({ port: replica.port, host: "127.0.0.1", maxRetriesPerRequest: 2 });
  await waitFor(linkUp, { timeoutMs: 20_000, intervalMs: 50, what: "the replica to attach" });
}, 30_000);

afterAll(async () => {
  replica.child.kill("SIGCONT");
  conn.disconnect();
  replicaConn.disconnect();
  for (const c of extra) c.disconnect();
  await replica.stop();
  await primary.stop();
});

/** Runs `during` with the replica process stopped, then resumes it and waits for its link. */
async function withReplicaStopped<T>(during: () => Promise<T>): Promise<T> {
  replica.child.kill("SIGSTOP");
  try {
    return await during();
  } finally {
    replica.child.kill("SIGCONT");
    await waitFor(linkUp, { timeoutMs: 20_000, intervalMs: 50, what: "the replica to resume" });
  }
}

describe("replicated durability", () => {
  it("returns a submission only once the replica holds it", async () => {
    const namespace = freshNamespace("replicated");
    const patient: RedisDurability = { mode: "replicated", minReplicas: 1, timeoutMs: 20_000 };
    const store = createRedisStore({ redis: conn, namespace, durability: patient });
    const onPrimary = createRedisStore({ redis: duplicate(conn), namespace });
    const onReplica = createRedisStore({ redis: replicaConn, namespace });
    const sid = freshSessionId();
    replica.child.kill("SIGSTOP");
    let settled = false;
    const call = store
      .submitInput(inputDraft(sid, "on two nodes", { kind: "next_turn" }, "k-1"))
      .finally(() => (settled = true));
    try {
      // The primary already holds the input, yet the call has not returned: it waits on WAIT.
      await waitFor(async () => (await onPrimary.listInputs(sid)).length === 1, {
        what: "the primary to hold the input",
      });
      expect(settled).toBe(false);
    } finally {
      replica.child.kill("SIGCONT");
    }
    expect((await call).deduplicated).toBe(false);
    // Read straight from the replica the moment the call returned: WAIT saw it acknowledge.
    const seen = await onReplica.listInputs(sid);
    expect(seen.map((i) => [i.payload, i.sourceKey])).toEqual([["on two nodes", "k-1"]]);
  });

  it("fails UNAVAILABLE naming the durability when no replica confirms, and the retry is safe", async () => {
    const store = createRedisStore({
      redis: conn,
      namespace: freshNamespace("replicated"),
      durability: REPLICATED,
    });
    const sid = freshSessionId();
    const draft = inputDraft(sid, "once", { kind: "next_turn" }, "retry-key");
    const owner = opaqueOwner("worker");
    const committed = freshSessionId();
    const stamped = commitDraft(committed, 0, {
      appendMessages: ["turn-1"],
      advanceTurn: true,
      stamp: { operationId: "op-1", contentHash: "hash-1" },
    });
    const refused = await withReplicaStopped(async () => [
      await store.submitInput(draft).catch((e: unknown) => e),
      await store.tryClaimLease(sid, owner, LONG_TTL_MS).catch((e: unknown) => e),
      await store.commit(stamped).catch((e: unknown) => e),
    ]);
    for (const error of refused) {
      expect(error).toBeInstanceOf(TetherError);
      const typed = error as TetherError;
      expect(typed.code).toBe("replication_unconfirmed");
      expect(typed.classification).toBe("retryable");
      expect(STATUS_OF[typed.code]).toBe(Code.Unavailable);
      expect(typed.message).toContain('durability "replicated"');
      expect(typed.fields).toEqual({
        durability: "replicated",
        required: 1,
        confirmed: 0,
        timeoutMs: 300,
      });
    }

    // The same calls again, with the replica back: answered from what the first attempts stored.
    const receipt = await store.submitInput(draft);
    expect(receipt.deduplicated).toBe(true);
    expect((await store.listInputs(sid)).map((i) => i.payload)).toEqual(["once"]);
    // The refused claim ran on the primary: its retry re-enters that lease, token and all.
    const stored = await store.currentLease(sid);
    expect(stored?.owner.ownerId).toBe("owner-worker");
    const claim = await store.tryClaimLease(sid, owner, LONG_TTL_MS);
    expect(claim.kind === "acquired" && [claim.reentered, claim.lease.fencingToken]).toEqual([
      true,
      stored?.fencingToken,
    ]);
    expect(await store.commit(stamped)).toEqual({
      sessionId: committed,
      headRevision: 1,
      replayed: true,
    });
    expect((await store.loadSession(committed))?.messages).toEqual(["turn-1"]);
  });

  it("async acknowledges without waiting for the replica (today's behaviour)", async () => {
    const store = createRedisStore({ redis: conn, namespace: freshNamespace("async") });
    const sid = freshSessionId();
    const receipt = await withReplicaStopped(() =>
      store.submitInput(inputDraft(sid, "primary only", { kind: "next_turn" }, "k-async")),
    );
    expect(receipt.deduplicated).toBe(false);
  });
});
