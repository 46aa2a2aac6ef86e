// TETHER_REDIS_DURABILITY on a real primary with one replica: `replicated` returns an
// acknowledgement only once the replica has the write; with the replica stopped (SIGSTOP) the
// call fails replication_unconfirmed (UNAVAILABLE), and the retry with the same idempotency key
// after the replica resumes succeeds without a duplicate. `async` acknowledges regardless.
import { Code } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATUS_OF } from "../../src/api/errors.js";
import { TetherError } from "../../src/domain/errors.js";
import { fenceOf } from "../../src/domain/lease.js";
import type { WebhookEndpointDraft } from "../../src/domain/webhooks.js";
import { createRedisEventLog } from "../../src/store/redis/event-log.js";
import { createRedisStore, createRedisWebhookStore } from "../../src/store/redis/index.js";
import { createRedisScheduleStore } from "../../src/store/redis/schedule-ops.js";
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
import { turnCompleted } from "../support/session-events.js";

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

  it("a read answers only with what the replica holds, whoever wrote it", async () => {
    // The writer and the reader share nothing but the namespace: the reader's connection has
    // written nothing, so a WAIT of its own would confirm at once; its mark is what makes the
    // WAIT cover the writer's commit.
    const namespace = freshNamespace("replicated");
    const writer = createRedisStore({ redis: duplicate(conn), namespace, durability: REPLICATED });
    const reader = createRedisStore({ redis: duplicate(conn), namespace, durability: REPLICATED });
    const unwaited = createRedisStore({ redis: duplicate(conn), namespace });
    const sid = freshSessionId();
    const first = commitDraft(sid, 0, { appendMessages: ["turn-1"], advanceTurn: true });
    expect((await writer.commit(first)).headRevision).toBe(1);
    const owner = opaqueOwner("reader-check");
    const lease = await writer.tryClaimLease(sid, owner, LONG_TTL_MS);
    if (lease.kind !== "acquired") throw new Error("the lease was not acquired");
    const completed = turnCompleted(2, lease.lease.fencingToken);
    // The commit appends its turn's completion to the log in its own step (ADR 0023).
    const second = commitDraft(sid, 1, {
      appendMessages: ["turn-2"],
      advanceTurn: true,
      stamp: { operationId: "op-dirty", contentHash: "hash-dirty" },
      announce: {
        fence: fenceOf(lease.lease),
        turnId: "turn-2",
        eventJson: JSON.stringify(completed),
        releaseIfIdle: true,
      },
    });
    const log = createRedisEventLog({ redis: duplicate(conn), namespace, durability: REPLICATED });
    const unwaitedLog = createRedisEventLog({ redis: duplicate(conn), namespace });

    const reads = await withReplicaStopped(async () => {
      // The commit runs on the primary; no replica confirms it, so nobody was promised it.
      const refused = await writer.commit(second).catch((e: unknown) => e);
      return {
        refused,
        onPrimary: (await unwaited.loadSession(sid))?.headRevision,
        session: await reader.loadSession(sid).catch((e: unknown) => e),
        summary: await reader.readSessionSummaries([sid]).catch((e: unknown) => e),
        lease: await reader.currentLease(sid).catch((e: unknown) => e),
        inputs: await reader.listInputs(sid).catch((e: unknown) => e),
        logOnPrimary: (await unwaitedLog.read(sid, 0, 10)).entries.map((e) => e.event.type),
        logPage: await log.read(sid, 0, 10).catch((e: unknown) => e),
        // A blocking read's failure is only a wake-up (nothing handed over); the page reports it.
        logWait: await log.waitForEntries(sid, 0, 100, new AbortController().signal, 10),
      };
    });
    expect((reads.refused as TetherError).code).toBe("replication_unconfirmed");
    // Unwaited, the primary shows revision 2 that a failover now could still take back.
    expect(reads.onPrimary).toBe(2);
    expect(reads.logOnPrimary).toEqual(["turn_completed"]);
    expect(reads.logWait).toBeUndefined();
    for (const refusal of [
      reads.session,
      reads.summary,
      reads.lease,
      reads.inputs,
      reads.logPage,
    ]) {
      expect(refusal).toBeInstanceOf(TetherError);
      const typed = refusal as TetherError;
      expect(typed.code).toBe("replication_unconfirmed");
      expect(STATUS_OF[typed.code]).toBe(Code.Unavailable);
      expect(typed.message).toContain("what the read saw");
      expect(typed.fields).toMatchObject({ required: 1, confirmed: 0 });
    }
    // With the replica back it holds revision 2, and the same read shows it.
    expect((await reader.loadSession(sid))?.headRevision).toBe(2);
    const page = await log.read(sid, 0, 10);
    expect(page.entries.map((e) => e.event)).toEqual([completed]);
    const onReplica = createRedisStore({ redis: replicaConn, namespace });
    expect((await onReplica.loadSession(sid))?.headRevision).toBe(2);
  });

  it("waits for the replica on what a client sets in schedules and webhook endpoints too", async () => {
    const namespace = freshNamespace("replicated");
    const schedules = createRedisScheduleStore({ redis: conn, namespace, durability: REPLICATED });
    const webhooks = createRedisWebhookStore({ redis: conn, namespace, durability: REPLICATED });
    const ref = { tenant: "acme", scheduleId: "nightly" };
    const endpoint: WebhookEndpointDraft = {
      tenant: "acme",
      endpointId: "ep-1",
      url: "https://hooks.example.com/tether",
      eventTypes: ["turn.completed"],
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      createdAtMs: 1_700_000_000_000,
    };
    const refused = await withReplicaStopped(async () => [
      await schedules
        .createSchedule({ ...ref, spec: '{"v":1}', nextFireAt: 1_700_000_000_000 })
        .catch((e: unknown) => e),
      await webhooks.createEndpoint(endpoint).catch((e: unknown) => e),
      // Nor are they shown while no replica holds them.
      await schedules.getSchedule(ref).catch((e: unknown) => e),
      await webhooks.getEndpoint("acme", "ep-1").catch((e: unknown) => e),
    ]);
    for (const error of refused) {
      expect((error as TetherError).code).toBe("replication_unconfirmed");
    }
    // The retries find what the first attempts stored.
    expect(
      (await schedules.createSchedule({ ...ref, spec: '{"v":1}', nextFireAt: 1_700_000_000_000 }))
        .kind,
    ).toBe("existing");
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
