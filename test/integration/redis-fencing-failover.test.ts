// Fencing across a failover (ADR 0022), each case of the ADR's argument on real redis-server
// processes: a primary and one replica on loopback. A failover that loses writes is made exact:
// the replica is detached (REPLICAOF NO ONE) and promoted, then the old primary takes the writes
// the failover loses, and the stale holder's calls go to the promoted replica as its connection
// would after a failover. An isolated old primary is a replica stopped with SIGSTOP: its link
// stays open but says nothing, as in a partition.
import { Code } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { STATUS_OF } from "../../src/api/errors.js";
import { TetherError } from "../../src/domain/errors.js";
import type { SessionId } from "../../src/domain/ids.js";
import { inputClaimCompletion, type TurnInputClaim } from "../../src/domain/inputs.js";
import { fenceOf, type LeaseOwner, type SessionExecutionLease } from "../../src/domain/lease.js";
import type { RuntimeStore } from "../../src/ports/runtime-store.js";
import { silentLogger } from "../../src/runtime/deps.js";
import type { Logger } from "../../src/server/logger.js";
import {
  adviseOnReplication,
  readReplicationFacts,
} from "../../src/server/redis-replication-advice.js";
import { createLeaseKeeper } from "../../src/runtime/session/lease-keeper.js";
import type { RedisDurability } from "../../src/store/redis/durability.js";
import { createRedisStore } from "../../src/store/redis/index.js";
import { acquire, expectTetherError } from "../conformance/support/expectations.js";
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

/** For the calls a test expects refused: the replica is gone, so WAIT always runs out. */
const REPLICATED: RedisDurability = { mode: "replicated", minReplicas: 1, timeoutMs: 300 };
/** For the calls before the failover, which must be confirmed even on a busy machine. */
const PATIENT: RedisDurability = { mode: "replicated", minReplicas: 1, timeoutMs: 10_000 };
/** Short enough to wait out on the promoted replica, long enough for the steps before it. */
const STALE_TTL_MS = 2_000;
const ASYNC: RedisDurability = { mode: "async" };

interface Pair {
  primary: RedisProcess;
  replica: RedisProcess;
  /** A connection to the primary, and one to the replica. */
  onPrimary: Redis;
  onReplica: Redis;
  namespace: string;
  /** A store on the primary under `durability`. */
  primaryStore(durability: RedisDurability): RuntimeStore;
  /** A store on the replica: after `promote`, the store of the promoted replica. */
  replicaStore(): RuntimeStore;
  /** The replica stops following and becomes a primary: what the old primary takes next is lost. */
  promote(): Promise<void>;
  /** Waits until the replica holds every write made so far on `onPrimary`. */
  synced(): Promise<void>;
}

const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

async function startPair(primaryArgs: string[] = []): Promise<Pair> {
  const primary = await startRedis(["--repl-diskless-sync-delay", "0", ...primaryArgs]);
  const replica = await startRedis(["--replicaof", "127.0.0.1", String(primary.port)]);
  const onPrimary = new Redis({ port: primary.port, host: "127.0.0.1", maxRetriesPerRequest: 2 });
  const onReplica = new Redis({ port: replica.port, host: "127.0.0.1", maxRetriesPerRequest: 2 });
  opened.push(async () => {
    replica.child.kill("SIGCONT");
    onPrimary.disconnect();
    onReplica.disconnect();
    await replica.stop();
    await primary.stop();
  });
  await waitFor(async () => /slave0:.*state=online/u.test(await onPrimary.info("replication")), {
    timeoutMs: 20_000,
    intervalMs: 50,
    what: "the replica to attach",
  });
  const namespace = freshNamespace("fencing");
  return {
    primary,
    replica,
    onPrimary,
    onReplica,
    namespace,
    // Every store shares `onPrimary`, so WAIT in synced() covers what they all wrote.
    primaryStore: (durability) => createRedisStore({ redis: onPrimary, namespace, durability }),
    replicaStore: () => createRedisStore({ redis: onReplica, namespace }),
    async promote() {
      expect(await onReplica.call("REPLICAOF", "NO", "ONE")).toBe("OK");
    },
    async synced() {
      expect(await onPrimary.call("WAIT", 1, 10_000)).toBe(1);
    },
  };
}

async function redisMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/**
 * The premise the ADR names: the promoted replica's clock reads past the lost token. A real
 * failover takes at least Sentinel's down-after-milliseconds; here the two nodes share a host
 * clock, so this waits a millisecond at most.
 */
async function clockPassed(redis: Redis, token: number): Promise<void> {
  await waitFor(async () => (await redisMs(redis)) > token, {
    intervalMs: 1,
    what: "the promoted replica's clock to pass the lost token",
  });
}

async function claimInput(store: RuntimeStore, lease: SessionExecutionLease) {
  const claim = await store.claimInputs(fenceOf(lease), { kind: "idle" }, 10);
  if (!claim) throw new Error("no input to claim");
  return claim;
}

/** Claims until the lease the promoted replica still shows has expired there. */
async function acquireOnceExpired(store: RuntimeStore, sid: SessionId, owner: LeaseOwner) {
  const outcome = await waitFor(
    async () => {
      const claim = await store.tryClaimLease(sid, owner, LONG_TTL_MS);
      return claim.kind === "acquired" ? claim : undefined;
    },
    { intervalMs: 50, what: "the lease on the promoted replica to expire" },
  );
  return outcome.lease;
}

function expectUnavailable(error: TetherError): void {
  expect(STATUS_OF[error.code]).toBe(Code.Unavailable);
  expect(error.classification).toBe("retryable");
}

describe("a lost claim", () => {
  it("async: the promoted replica's next token is greater than the lost one, and the stale holder is fenced out", async () => {
    const pair = await startPair();
    const old = pair.primaryStore(ASYNC);
    const sid = freshSessionId();
    await old.submitInput(inputDraft(sid, "question", { kind: "next_turn" }, "k-1"));
    const before = await acquire(old, sid, opaqueOwner("before"), LONG_TTL_MS);
    expect(await old.releaseLease(fenceOf(before))).toEqual({ kind: "released" });
    await pair.synced();
    await pair.promote();

    // Acknowledged by the old primary, never received by the promoted replica.
    const stale = await acquire(old, sid, opaqueOwner("stale"), LONG_TTL_MS);
    const staleClaim = await claimInput(old, stale);
    expect(stale.fencingToken).toBeGreaterThan(before.fencingToken);
    const promoted = pair.replicaStore();
    expect(await promoted.currentLease(sid)).toBeUndefined();

    await clockPassed(pair.onReplica, stale.fencingToken);
    const next = await acquire(promoted, sid, opaqueOwner("next"), LONG_TTL_MS);
    // The counter there stopped at `before`: without the clock floor this token would be
    // before + 1, the lost token again, on another holder.
    expect(next.fencingToken).toBeGreaterThan(stale.fencingToken);
    const nextClaim = await claimInput(promoted, next);
    expect(nextClaim.inputs.map((i) => i.payload)).toEqual(["question"]);

    // Every fenced call of the stale holder reaches the promoted replica, and is refused there.
    await expectTetherError(
      () => promoted.renewLease(fenceOf(stale), LONG_TTL_MS),
      "session_execution_lease_expired",
    );
    await expectTetherError(
      () => promoted.claimInputs(fenceOf(stale), { kind: "idle" }, 10),
      "session_execution_lease_expired",
    );
    expect(await promoted.renewLeases([fenceOf(stale)], LONG_TTL_MS)).toEqual([
      { kind: "expired" },
    ]);
    expect(await promoted.releaseLease(fenceOf(stale))).toEqual({ kind: "not_held" });
    await expectTetherError(
      () =>
        promoted.commit(
          commitDraft(sid, 1, {
            appendMessages: ["stale answer"],
            completeInputClaims: [inputClaimCompletion(staleClaim)],
          }),
        ),
      "turn_input_claim_superseded",
    );
    // The new holder is untouched by all of it and commits the turn.
    expect((await promoted.currentLease(sid))?.leaseToken).toBe(next.leaseToken);
    const receipt = await promoted.commit(
      commitDraft(sid, 1, {
        appendMessages: ["answer"],
        completeInputClaims: [inputClaimCompletion(nextClaim)],
      }),
    );
    expect(receipt.headRevision).toBe(2);
    expect((await promoted.loadSession(sid))?.messages).toEqual(["answer"]);
  });

  it("replicated: a claim no replica confirmed is not acknowledged, and the promoted replica's next token is greater still", async () => {
    const pair = await startPair();
    const setup = pair.primaryStore(PATIENT);
    const old = pair.primaryStore(REPLICATED);
    const sid = freshSessionId();
    const before = await acquire(setup, sid, opaqueOwner("before"), LONG_TTL_MS);
    expect(await setup.releaseLease(fenceOf(before))).toEqual({ kind: "released" });
    await pair.promote();

    const refused = await expectTetherError(
      () => old.tryClaimLease(sid, opaqueOwner("stale"), LONG_TTL_MS),
      "replication_unconfirmed",
    );
    expectUnavailable(refused);
    // The script ran on the old primary and issued a token nobody was told: a replicated read
    // does not show it either (no replica holds it); read without waiting, it is there.
    await expectTetherError(() => old.currentLease(sid), "replication_unconfirmed");
    const unacknowledged = await pair.primaryStore(ASYNC).currentLease(sid);
    expect(unacknowledged?.owner.ownerId).toBe("owner-stale");
    expect(unacknowledged?.fencingToken).toBeGreaterThan(before.fencingToken);

    // The promoted replica would have replicas of its own; this one has none, so it is read async.
    const promoted = pair.replicaStore();
    await clockPassed(pair.onReplica, unacknowledged?.fencingToken ?? Infinity);
    const next = await acquire(promoted, sid, opaqueOwner("next"), LONG_TTL_MS);
    expect(next.fencingToken).toBeGreaterThan(unacknowledged?.fencingToken ?? Infinity);
  });
});

describe("a lost renewal", () => {
  it("async: the lease only expires sooner on the promoted replica; the next holder's token is greater and the stale holder is refused", async () => {
    const pair = await startPair();
    const old = pair.primaryStore(ASYNC);
    const sid = freshSessionId();
    await old.submitInput(inputDraft(sid, "question", { kind: "next_turn" }, "k-1"));
    const stale = await acquire(old, sid, opaqueOwner("stale"), STALE_TTL_MS);
    const staleClaim = await claimInput(old, stale);
    await pair.synced();
    await pair.promote();

    const renewed = await old.renewLease(fenceOf(stale), LONG_TTL_MS);
    expect(renewed.expiresAtMs).toBeGreaterThan(stale.expiresAtMs);
    const promoted = pair.replicaStore();
    // The promoted replica has the claim but not the renewal: the lease ends at its first expiry.
    expect((await promoted.currentLease(sid))?.expiresAtMs).toBe(stale.expiresAtMs);

    const next = await acquireOnceExpired(promoted, sid, opaqueOwner("next"));
    expect(next.fencingToken).toBeGreaterThan(stale.fencingToken);
    const nextClaim = await claimInput(promoted, next);
    expect(nextClaim.inputs.map((i) => i.inputId)).toEqual(staleClaim.inputs.map((i) => i.inputId));

    // The stale holder, who believes its lease runs for a minute, is refused on every path.
    await expectTetherError(
      () => promoted.renewLease(fenceOf(stale), LONG_TTL_MS),
      "session_execution_lease_expired",
    );
    await expectTetherError(
      () =>
        promoted.commit(
          commitDraft(sid, 1, {
            appendMessages: ["stale answer"],
            completeInputClaims: [inputClaimCompletion(staleClaim)],
          }),
        ),
      "turn_input_claim_superseded",
    );
    await promoted.commit(
      commitDraft(sid, 1, {
        appendMessages: ["answer"],
        completeInputClaims: [inputClaimCompletion(nextClaim)],
      }),
    );
    // A plain commit carries no fence: the head CAS alone keeps the stale holder's out.
    await expectTetherError(
      () => promoted.commit(commitDraft(sid, 1, { appendMessages: ["stale plain"] })),
      "head_revision_conflict",
    );
    expect((await promoted.loadSession(sid))?.messages).toEqual(["answer"]);
  });

  it("replicated: a renewal no replica confirms is refused, and the lease keeper stops the holder", async () => {
    const pair = await startPair();
    const old = pair.primaryStore(REPLICATED);
    const sid = freshSessionId();
    const lease = await acquire(
      pair.primaryStore(PATIENT),
      sid,
      opaqueOwner("holder"),
      LONG_TTL_MS,
    );
    await pair.promote();

    expectUnavailable(
      await expectTetherError(
        () => old.renewLease(fenceOf(lease), LONG_TTL_MS),
        "replication_unconfirmed",
      ),
    );
    await expectTetherError(
      () => old.renewLeases([fenceOf(lease)], LONG_TTL_MS),
      "replication_unconfirmed",
    );
    // In async mode the same renewal goes through on the old primary: the holder runs on.
    const unwaited = pair.primaryStore(ASYNC);
    expect((await unwaited.renewLease(fenceOf(lease), LONG_TTL_MS)).leaseToken).toBe(
      lease.leaseToken,
    );
    const lost: unknown[] = [];
    const keeper = createLeaseKeeper({ store: old, leaseTtlMs: 300, logger: silentLogger });
    const stop = keeper.keep(fenceOf(lease), (error) => lost.push(error));
    try {
      const [error] = await waitFor(() => (lost.length > 0 ? lost : undefined), {
        what: "the keeper to give the lease up",
      });
      expect(error).toMatchObject({ code: "replication_unconfirmed" });
    } finally {
      stop();
    }
  });
});

describe("a lost commit", () => {
  for (const durability of [ASYNC, REPLICATED]) {
    it(`${durability.mode}: the turn runs again on the promoted replica, at the same revision, once`, async () => {
      const pair = await startPair();
      const setup = pair.primaryStore(durability.mode === "async" ? ASYNC : PATIENT);
      const old = pair.primaryStore(durability);
      const sid = freshSessionId();
      await setup.submitInput(inputDraft(sid, "question", { kind: "next_turn" }, "k-1"));
      const stale = await acquire(setup, sid, opaqueOwner("stale"), STALE_TTL_MS);
      const staleClaim: TurnInputClaim = await claimInput(setup, stale);
      await pair.synced();
      await pair.promote();

      const staleCommit = commitDraft(sid, 1, {
        appendMessages: ["first answer"],
        advanceTurn: true,
        completeInputClaims: [inputClaimCompletion(staleClaim)],
        releaseLease: fenceOf(stale),
        stamp: { operationId: "turn-1", contentHash: "first" },
      });
      if (durability.mode === "async") {
        // Acknowledged, and lost with the old primary.
        expect((await old.commit(staleCommit)).headRevision).toBe(2);
      } else {
        expectUnavailable(
          await expectTetherError(() => old.commit(staleCommit), "replication_unconfirmed"),
        );
      }

      const promoted = pair.replicaStore();
      const session = await promoted.loadSession(sid);
      expect([session?.headRevision, session?.messages]).toEqual([1, []]);
      expect((await promoted.listInputs(sid)).map((i) => [i.payload, i.state])).toEqual([
        ["question", "claimed"],
      ]);

      // The next holder takes the same input again and runs the turn again.
      const next = await acquireOnceExpired(promoted, sid, opaqueOwner("next"));
      expect(next.fencingToken).toBeGreaterThan(stale.fencingToken);
      const again = await claimInput(promoted, next);
      expect(again.inputs.map((i) => i.inputId)).toEqual(staleClaim.inputs.map((i) => i.inputId));
      const receipt = await promoted.commit(
        commitDraft(sid, 1, {
          appendMessages: ["second answer"],
          advanceTurn: true,
          completeInputClaims: [inputClaimCompletion(again)],
          releaseLease: fenceOf(next),
          stamp: { operationId: "turn-1-again", contentHash: "second" },
        }),
      );
      expect(receipt).toEqual({ sessionId: sid, headRevision: 2, replayed: false });

      // The stale holder's commit sent again reaches the promoted replica: its stamp is not there
      // (the old primary's record was lost with it), and the head moved on, so nothing applies.
      await expectTetherError(() => promoted.commit(staleCommit), "head_revision_conflict");
      const after = await promoted.loadSession(sid);
      expect([after?.headRevision, after?.messages]).toEqual([2, ["second answer"]]);
      expect(await promoted.listInputs(sid)).toEqual([]);
    });
  }
});

describe("an old primary cut off from its replica", () => {
  it("refuses writes under min-replicas-to-write (NOREPLICAS, UNAVAILABLE), even in async mode, and changes nothing", async () => {
    const pair = await startPair(["--min-replicas-to-write", "1", "--min-replicas-max-lag", "1"]);
    const old = pair.primaryStore(ASYNC);
    const sid = freshSessionId();
    await old.submitInput(inputDraft(sid, "question", { kind: "next_turn" }, "k-1"));
    const stale = await acquire(old, sid, opaqueOwner("stale"), LONG_TTL_MS);
    const staleClaim = await claimInput(old, stale);

    // The partition: the replica's link stays open and says nothing.
    pair.replica.child.kill("SIGSTOP");
    const refusal = await waitFor(
      () =>
        old.renewLease(fenceOf(stale), LONG_TTL_MS).then(
          () => undefined,
          (error: unknown) => error,
        ),
      { timeoutMs: 15_000, intervalMs: 100, what: "the old primary to refuse writes" },
    );
    expect(refusal).toBeInstanceOf(TetherError);
    expect((refusal as TetherError).code).toBe("store_unavailable");
    expectUnavailable(refusal as TetherError);

    await expectTetherError(
      () =>
        old.commit(
          commitDraft(sid, 1, {
            appendMessages: ["stale answer"],
            completeInputClaims: [inputClaimCompletion(staleClaim)],
          }),
        ),
      "store_unavailable",
    );
    await expectTetherError(
      () => old.submitInput(inputDraft(sid, "more", { kind: "next_turn" }, "k-2")),
      "store_unavailable",
    );
    await expectTetherError(
      () => old.tryClaimLease(freshSessionId(), opaqueOwner("other"), LONG_TTL_MS),
      "store_unavailable",
    );
    // Reads are still served: what the old primary shows may later be rolled back (ADR 0022).
    const session = await old.loadSession(sid);
    expect([session?.headRevision, session?.messages]).toEqual([1, []]);
    expect((await old.listInputs(sid)).map((i) => i.payload)).toEqual(["question"]);
  });

  it("is what the start-up advice looks for: it reads the primary's settings and warns without them", async () => {
    const pair = await startPair();
    const facts = await readReplicationFacts(pair.onPrimary, "primary");
    expect(facts).toEqual({
      node: "primary",
      minReplicasToWrite: 0,
      minReplicasMaxLagS: 10,
      connectedReplicas: 1,
    });
    const warnings: string[] = [];
    const logger = {
      info: () => undefined,
      warn: (_fields: object, message: string) => warnings.push(message),
    } as unknown as Logger;
    await adviseOnReplication(pair.onPrimary, REPLICATED, logger);
    expect(warnings).toEqual([
      "the Redis primary has 1 replica(s) and min-replicas-to-write 0: cut off from them in a " +
        "partition, it keeps taking lease renewals and commits a failover will discard; set " +
        "min-replicas-to-write to at least 1, with min-replicas-max-lag below Sentinel's " +
        "down-after-milliseconds (ADR 0022)",
    ]);
    await pair.onPrimary.config("SET", "min-replicas-to-write", "1");
    warnings.length = 0;
    await adviseOnReplication(pair.onPrimary, REPLICATED, logger);
    expect(warnings).toEqual([]);
  });
});
