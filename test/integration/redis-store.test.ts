// The Redis store beyond the shared laws: its key layout, its round trips per turn cycle, its
// error mapping, and the lease/commit/queue basics against a real redis-server.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { isTetherError } from "../../src/domain/errors.js";
import { parseSessionId, type SessionId } from "../../src/domain/ids.js";
import { fenceOf, type LeaseOwner, type SessionExecutionLease } from "../../src/domain/lease.js";
import { queueClaimCompletion, type QueuedWorkDraft } from "../../src/domain/queue.js";
import type { RuntimeStore } from "../../src/ports/runtime-store.js";
import { createRedisStore } from "../../src/store/redis/index.js";
import { coalesceWrites } from "../../src/store/redis/connections.js";
import { connectStandalone, freshNamespace } from "../support/redis-store-factory.js";

let redis: Redis;

beforeAll(() => {
  redis = connectStandalone(inject("redisUrl"));
});

afterAll(async () => {
  await redis.quit();
});

function owner(name: string, incarnation = "1"): LeaseOwner {
  return { ownerId: name, incarnationId: `${name}#${incarnation}`, liveness: { kind: "opaque" } };
}

function work(session: SessionId, payload: string): QueuedWorkDraft {
  return {
    sessionId: session,
    workClass: "turn_work",
    deliveryPolicy: "earliest_safe_boundary",
    slotPolicy: "exclusive",
    payload,
  };
}

function acquired(
  outcome: Awaited<ReturnType<RuntimeStore["tryClaimLease"]>>,
): SessionExecutionLease {
  if (outcome.kind !== "acquired") throw new Error(`busy: held by ${outcome.holder.owner.ownerId}`);
  return outcome.lease;
}

function fresh(namespace = freshNamespace("integration")): {
  store: RuntimeStore;
  namespace: string;
} {
  return { store: createRedisStore({ redis, namespace }), namespace };
}

describe("redis store", () => {
  it("runs a lease cycle: acquire, re-enter, busy, renew, release, a higher token after", async () => {
    const { store } = fresh();
    const s = parseSessionId("lease-cycle");
    const [seconds, micros] = await redis.time();
    const first = acquired(await store.tryClaimLease(s, owner("a"), 60_000));
    // A first token is the Redis clock in ms when the claim ran (ADR 0022), not 1.
    expect(first.fencingToken).toBeGreaterThanOrEqual(
      Number(seconds) * 1000 + Math.floor(Number(micros) / 1000),
    );

    const again = await store.tryClaimLease(s, owner("a"), 60_000);
    expect(again).toMatchObject({ kind: "acquired", reentered: true });
    expect(acquired(again).leaseToken).toBe(first.leaseToken);

    const other = await store.tryClaimLease(s, owner("b"), 60_000);
    expect(other.kind).toBe("busy");

    const renewed = await store.renewLease(fenceOf(first), 120_000);
    expect(renewed.expiresAtMs).toBeGreaterThan(first.expiresAtMs);

    expect(await store.releaseLease(fenceOf(first))).toEqual({ kind: "released" });
    expect(await store.releaseLease(fenceOf(first))).toEqual({ kind: "not_held" });
    expect(await store.currentLease(s)).toBeUndefined();

    const second = acquired(await store.tryClaimLease(s, owner("b"), 60_000));
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
  });

  it("applies exactly one of two commits from the same head", async () => {
    const { store } = fresh();
    const s = parseSessionId("commit-cas");
    const results = await Promise.allSettled([
      store.commit({ sessionId: s, expectedHeadRevision: 0, appendMessages: ["left"] }),
      store.commit({ sessionId: s, expectedHeadRevision: 0, appendMessages: ["right"] }),
    ]);
    const applied = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected");
    expect(applied).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(isTetherError(refused[0]?.reason, "head_revision_conflict")).toBe(true);
    const snapshot = await store.loadSession(s);
    expect(snapshot?.headRevision).toBe(1);
    expect(snapshot?.messages).toHaveLength(1);
  });

  it("claims a batch and settles it in the commit that releases the lease", async () => {
    const { store } = fresh();
    const s = parseSessionId("queue-claim");
    const lease = acquired(await store.tryClaimLease(s, owner("worker"), 60_000));
    const { batch } = await store.enqueueWork(work(s, "wake"));
    const claim = await store.claimReadyWork(fenceOf(lease), "idle", 8);
    expect(claim?.batches.map((b) => b.batchId)).toEqual([batch.batchId]);
    expect(claim?.batches[0]?.state).toBe("claimed");
    if (!claim) return;

    const receipt = await store.commit({
      sessionId: s,
      expectedHeadRevision: 1, // the batch created the session
      appendMessages: ['{"role":"assistant"}'],
      advanceTurn: true,
      completeQueueClaims: [queueClaimCompletion(claim)],
      releaseLease: fenceOf(lease),
    });
    expect(receipt).toEqual({ sessionId: s, headRevision: 2, replayed: false });
    expect(await store.listWork(s)).toEqual([]);
    expect(await store.currentLease(s)).toBeUndefined();
    expect((await store.loadSession(s))?.turnIndex).toBe(1);
  });

  it("keeps every key of a session under its hash tag, and its generation across deletion", async () => {
    const { store, namespace } = fresh();
    const s = parseSessionId("layout");
    const lease = acquired(await store.tryClaimLease(s, owner("a"), 60_000));
    await store.enqueueWork({ ...work(s, "x"), sourceKey: "src-1" });
    await store.submitInput({ sessionId: s, delivery: { kind: "next_turn" }, payload: "hi" });
    await store.commit({
      sessionId: s,
      expectedHeadRevision: 1,
      appendMessages: ["m"],
      stamp: { operationId: "op", contentHash: "h" },
      metadataPatch: { k: "v" },
    });
    await new Promise((resolve) => setImmediate(resolve)); // the unawaited index update goes out

    const keys = await redis.keys(`${namespace}:*`);
    const sessionScoped = keys.filter((k) => k !== `${namespace}:sessions`);
    expect(sessionScoped.length).toBeGreaterThanOrEqual(10);
    for (const key of sessionScoped) expect(key.startsWith(`${namespace}:{layout}:`)).toBe(true);
    expect(keys).toContain(`${namespace}:sessions`);

    expect(await store.deleteSession(s)).toBe(true);
    expect(await redis.keys(`${namespace}:{layout}:*`)).toEqual([`${namespace}:{layout}:gen`]);
    const next = acquired(await store.tryClaimLease(s, owner("b"), 60_000));
    expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
  });

  it("takes four awaited round trips for a turn cycle, and no index update for a session it added", async () => {
    const counted = new Redis(inject("redisUrl"));
    // As the server's connections do: writes coalesce per turn of the event loop, but each step
    // of a cycle awaits the reply before it sends the next, so each command is still its own
    // round trip (a command count here is a round-trip count).
    coalesceWrites(counted);
    try {
      const store = createRedisStore({ redis: counted, namespace: freshNamespace("trips") });
      const cycle = async (s: SessionId, head: number): Promise<void> => {
        const lease = acquired(await store.tryClaimLease(s, owner("w"), 60_000));
        await store.enqueueWork(work(s, "p"));
        const claim = await store.claimReadyWork(fenceOf(lease), "idle", 1);
        if (!claim) throw new Error("nothing claimed");
        await store.commit({
          sessionId: s,
          expectedHeadRevision: head,
          appendMessages: ["done"],
          completeQueueClaims: [queueClaimCompletion(claim)],
          releaseLease: fenceOf(lease),
        });
      };
      // The first cycle loads every script on this connection and creates the session; the
      // counted one is a turn cycle of a session that exists, as most are.
      const s = parseSessionId(`counted-${randomUUID()}`);
      await cycle(s, 1);
      await new Promise((resolve) => setImmediate(resolve)); // and sends its index update
      const commands: string[] = [];
      const target = counted as unknown as { sendCommand: (command: { name: string }) => unknown };
      const send = target.sendCommand.bind(counted);
      target.sendCommand = (command) => {
        commands.push(command.name);
        return send(command);
      };
      await cycle(s, 2);
      // An index update would go out with the next turn of the event loop; this store added the
      // session with its first cycle, so there is none (ADR 0023).
      await new Promise((resolve) => setImmediate(resolve));
      expect(commands).toEqual(["evalsha", "evalsha", "evalsha", "evalsha"]);
    } finally {
      await counted.quit();
    }
  });

  it("lists a session deleted on another replica and created again by a commit here", async () => {
    const namespace = freshNamespace("relist");
    const here = createRedisStore({ redis, namespace });
    const there = createRedisStore({ redis, namespace });
    const s = parseSessionId("again");
    await here.commit({ sessionId: s, expectedHeadRevision: 0, appendMessages: [] });
    await here.commit({ sessionId: s, expectedHeadRevision: 1, appendMessages: ["m"] });
    expect(await there.deleteSession(s)).toBe(true);
    expect((await here.listSessions({ limit: 10 })).sessionIds).toEqual([]);
    await here.commit({ sessionId: s, expectedHeadRevision: 0, appendMessages: [] });
    await here.commit({ sessionId: s, expectedHeadRevision: 1, appendMessages: ["m"] });
    expect((await here.listSessions({ limit: 10 })).sessionIds).toEqual([s]);
  });

  it("lists a session created by its first input or batch, as it lists one created by a commit", async () => {
    const { store } = fresh();
    const byInput = parseSessionId("made-by-input");
    const byWork = parseSessionId("made-by-work");
    await store.submitInput({ sessionId: byInput, delivery: { kind: "next_turn" }, payload: "hi" });
    await store.enqueueWork(work(byWork, "wake"));
    const page = await store.listSessions({ limit: 10 });
    expect(page.sessionIds).toEqual(["made-by-input", "made-by-work"]);
  });

  it("maps an unreachable server to store_unavailable", async () => {
    const down = new Redis({
      host: "127.0.0.1",
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const store = createRedisStore({ redis: down, namespace: freshNamespace("down") });
    const error = await store.currentLease(parseSessionId("any")).catch((e: unknown) => e);
    expect(isTetherError(error, "store_unavailable")).toBe(true);
    expect(isTetherError(error) && error.classification).toBe("retryable");
    down.disconnect();
  });

  it("maps a script fault to internal, never a raw Redis message", async () => {
    const { store, namespace } = fresh();
    await redis.set(`${namespace}:{broken}:work`, "not a hash");
    const error = await store
      .enqueueWork(work(parseSessionId("broken"), "x"))
      .catch((e: unknown) => e);
    expect(isTetherError(error, "internal")).toBe(true);
    expect(error instanceof Error && error.message).not.toMatch(/WRONGTYPE/);
  });
});

describe("the settled-inputs watermark", () => {
  it("claims scan only above the inputs every commit settled, and never skip an open one", async () => {
    const namespace = freshNamespace("watermark");
    const store = createRedisStore({ redis, namespace });
    const s = parseSessionId(`wm-${randomUUID()}`);
    const submit = async (text: string) =>
      (await store.submitInput({ sessionId: s, delivery: { kind: "next_turn" }, payload: text }))
        .input;
    const head = `${namespace}:{${s}}:head`;
    const fence = fenceOf(acquired(await store.tryClaimLease(s, owner("w"), 60_000)));

    const first = await submit("one");
    const second = await submit("two");
    const claim = await store.claimInputs(fence, { kind: "idle" }, 2);
    if (!claim) throw new Error("nothing claimed");
    await store.commit({
      sessionId: s,
      expectedHeadRevision: 1,
      appendMessages: [],
      completeInputClaims: [
        {
          sessionId: s,
          claimId: claim.claimId,
          fencingToken: fence.fencingToken,
          inputIds: claim.inputs.map((i) => i.inputId),
        },
      ],
    });
    expect(await redis.hget(head, "ilow")).toBe(String(second.seq));

    // A cancelled input is settled too, but only once a commit moves past it.
    const third = await submit("three");
    const fourth = await submit("four");
    await store.cancelInputs(s, { kind: "ids", inputIds: [third.inputId] });
    const next = await store.claimInputs(fence, { kind: "idle" }, 10);
    expect(next?.inputs.map((i) => i.inputId)).toEqual([fourth.inputId]);
    await store.commit({
      sessionId: s,
      expectedHeadRevision: 2,
      appendMessages: [],
      completeInputClaims: [
        {
          sessionId: s,
          claimId: next!.claimId,
          fencingToken: fence.fencingToken,
          inputIds: [fourth.inputId],
        },
      ],
    });
    expect(await redis.hget(head, "ilow")).toBe(String(fourth.seq));
    expect(first.seq).toBeLessThan(second.seq);

    // A new input above the watermark is found; the listing shows only it.
    const fifth = await submit("five");
    expect((await store.listInputs(s)).map((i) => i.inputId)).toEqual([fifth.inputId]);
    expect(
      (await store.claimInputs(fence, { kind: "idle" }, 10))?.inputs.map((i) => i.inputId),
    ).toEqual([fifth.inputId]);
  });
});
