// Laws 4, 10 and 12 written once over every fenced operation: a stale fence of any kind is refused
// and changes nothing; a completion fails and changes nothing for each reason its claim can be
// stale; a claim racing a takeover ends in one of the two consistent orders. The port lists its
// fenced operations (FENCED_STORE_OPERATIONS, complete by its type); each needs a row here.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { inputClaimCompletion, type TurnInputClaim } from "../../../src/domain/inputs.js";
import { fenceOf, type LeaseFence } from "../../../src/domain/lease.js";
import { queueClaimCompletion, type QueuedWorkClaim } from "../../../src/domain/queue.js";
import { isTetherError } from "../../../src/domain/errors.js";
import {
  FENCED_STORE_OPERATIONS,
  type FencedStoreOperation,
  type RuntimeStore,
} from "../../../src/ports/runtime-store.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import {
  activeTurn,
  commitDraft,
  deadLocalOwner,
  freshSessionId,
  inputDraft,
  localClaimant,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory, type StoreHarness } from "../support/store-factory.js";

const TURN = "turn-1";

/** What a stale holder left behind: claims of its generation, and items still open. */
interface Seeded {
  sid: SessionId;
  work: QueuedWorkClaim;
  inputs: TurnInputClaim;
}

/** Everything a fenced operation could change, read without a fence. */
async function snapshot(store: RuntimeStore, sid: SessionId) {
  return {
    session: await store.loadSession(sid),
    lease: await store.currentLease(sid),
    work: await store.listWork(sid),
    inputs: await store.listInputs(sid),
    toolCalls: await store.readToolCalls(sid, TURN),
    parked: await store.readParkedTurn(sid),
  };
}

/**
 * How an operation refuses a stale fence: the typed error, a commit's superseded claim, release's
 * `not_held`, a renewal's `expired` outcome, a reclaim's `busy` (the observed holder is not the
 * current one, so nothing is taken over).
 */
type Refusal =
  "session_execution_lease_expired" | "claim_superseded" | "not_held" | "renewal_expired" | "busy";

interface FencedRow {
  operation: FencedStoreOperation;
  /** Tells apart the rows of one operation (a commit completes work claims or input claims). */
  variant?: string;
  /** A commit's claim completion carries a generation and no lease token: forged tokens skip it. */
  generationOnly?: boolean;
  /** With no live lease a reclaim is a plain claim (law 9): only kinds that leave one live. */
  needsLiveLease?: boolean;
  /**
   * Answers allowed for the holder's own expired, never replaced lease besides the refusal: a
   * release may clear that record (ADR 0001) and an idle release may keep it (`pending`), neither
   * of which changes anything observable, as there is no live lease before or after.
   */
  ownExpiredAlso?: string[];
  refusal: Refusal;
  run(store: RuntimeStore, stale: LeaseFence, seeded: Seeded): Promise<unknown>;
}

const rowName = (row: FencedRow) => `${row.operation}${row.variant ? ` (${row.variant})` : ""}`;

/** Every operation that takes a fence, with how it refuses a stale one (one row or more each). */
export const FENCED_OPERATIONS: FencedRow[] = [
  {
    operation: "claimReadyWork",
    refusal: "session_execution_lease_expired",
    run: (s, f) => s.claimReadyWork(f, "idle", 10),
  },
  {
    operation: "claimWorkByIds",
    refusal: "session_execution_lease_expired",
    run: (s, f, seeded) =>
      s.claimWorkByIds(
        f,
        seeded.work.batches.map((b) => b.batchId),
      ),
  },
  {
    operation: "claimInputs",
    refusal: "session_execution_lease_expired",
    run: (s, f) => s.claimInputs(f, { kind: "idle" }, 10),
  },
  {
    operation: "deferActiveInputs",
    refusal: "session_execution_lease_expired",
    run: (s, f) => s.deferActiveInputs(f, TURN),
  },
  {
    operation: "renewLease",
    refusal: "session_execution_lease_expired",
    run: (s, f) => s.renewLease(f, LONG_TTL_MS),
  },
  {
    operation: "renewLeases",
    refusal: "renewal_expired",
    run: (s, f) => s.renewLeases([f], LONG_TTL_MS),
  },
  {
    operation: "releaseLease",
    refusal: "not_held",
    ownExpiredAlso: ["released"],
    run: (s, f) => s.releaseLease(f),
  },
  {
    operation: "releaseIfIdle",
    refusal: "not_held",
    ownExpiredAlso: ["released", "pending"],
    run: (s, f) => s.releaseIfIdle(f),
  },
  {
    operation: "reclaimLease",
    refusal: "busy",
    needsLiveLease: true,
    run: (s, f, seeded) => s.reclaimLease(seeded.sid, localClaimant("claimant"), f, LONG_TTL_MS),
  },
  {
    operation: "recordToolCalls",
    refusal: "session_execution_lease_expired",
    run: (s, f) => s.recordToolCalls(f, TURN, [{ kind: "result", callId: "c-new" }]),
  },
  {
    operation: "closeToolCalls",
    refusal: "session_execution_lease_expired",
    run: (s, f) => s.closeToolCalls(f, TURN),
  },
  {
    operation: "parkTurn",
    refusal: "session_execution_lease_expired",
    run: (s, f, seeded) =>
      s.parkTurn(f, {
        turnId: TURN,
        waitingOn: [{ kind: "result", callId: "c1" }],
        progress: "{}",
        inputIds: seeded.inputs.inputs.map((i) => i.inputId),
        batchIds: seeded.work.batches.map((b) => b.batchId),
        ttlMs: LONG_TTL_MS,
      }),
  },
  {
    operation: "resumeTurn",
    refusal: "session_execution_lease_expired",
    run: (s, f) => s.resumeTurn(f, TURN),
  },
  // A commit's authority is its claim completions; the lease it names to release is advisory
  // (law 2 in commits.ts: a stale one never clears the newer lease, and the commit applies).
  {
    operation: "commit",
    variant: "queue claim completion",
    generationOnly: true,
    refusal: "claim_superseded",
    run: async (s, f, seeded) => {
      const head = (await s.loadSession(seeded.sid))?.headRevision ?? 0;
      const claim = { ...queueClaimCompletion(seeded.work), fencingToken: f.fencingToken };
      return s.commit(commitDraft(seeded.sid, head, { completeQueueClaims: [claim] }));
    },
  },
  {
    operation: "commit",
    variant: "input claim completion",
    generationOnly: true,
    refusal: "claim_superseded",
    run: async (s, f, seeded) => {
      const head = (await s.loadSession(seeded.sid))?.headRevision ?? 0;
      const claim = { ...inputClaimCompletion(seeded.inputs), fencingToken: f.fencingToken };
      return s.commit(commitDraft(seeded.sid, head, { completeInputClaims: [claim] }));
    },
  },
];

export interface FenceKind {
  name: string;
  /** The holder's lease expires (settle shortens it, then lets time pass). */
  expires?: boolean;
  /** A forged token names a live generation: only operations that check lease tokens meet it. */
  tokenOnly?: boolean;
  /** A newer generation holds the session once the fence is stale. */
  superseded?: boolean;
  /** Some lease (the holder's or a successor's) is live once the fence is stale. */
  leavesLiveLease: boolean;
  /** The holder's own lease expired and nobody replaced it. */
  ownExpired?: boolean;
  /**
   * Once for all the sessions of a test, seeded under long leases: where the kind needs them
   * expired, shortens each lease and lets time pass once, so no seeding races a short lease.
   */
  settle?(h: StoreHarness, helds: LeaseFence[]): Promise<void>;
  /** Leaves one seeded session (after `settle`) with a stale fence of this kind. */
  make(h: StoreHarness, held: LeaseFence): Promise<LeaseFence>;
}

async function letExpire(h: StoreHarness, helds: LeaseFence[]): Promise<void> {
  for (const held of helds) await h.store.renewLease(held, SHORT_TTL_MS);
  await h.advanceTime(PAST_SHORT_TTL_MS);
}

export const STALE_FENCE_KINDS: FenceKind[] = [
  {
    name: "released",
    leavesLiveLease: false,
    make: async (h, held) => {
      await h.store.releaseLease(held);
      return held;
    },
  },
  {
    name: "released, with a successor",
    superseded: true,
    leavesLiveLease: true,
    make: async (h, held) => {
      await h.store.releaseLease(held);
      await acquire(h.store, held.sessionId, opaqueOwner("successor"), LONG_TTL_MS);
      return held;
    },
  },
  {
    name: "expired, no successor",
    expires: true,
    leavesLiveLease: false,
    ownExpired: true,
    settle: letExpire,
    make: (_h, held) => Promise.resolve(held),
  },
  {
    name: "expired, with a successor",
    superseded: true,
    expires: true,
    leavesLiveLease: true,
    settle: letExpire,
    make: async (h, held) => {
      await acquire(h.store, held.sessionId, opaqueOwner("successor"), LONG_TTL_MS);
      return held;
    },
  },
  {
    name: "forged lease token on the live generation",
    tokenOnly: true,
    leavesLiveLease: true,
    make: (_h, held) => Promise.resolve({ ...held, leaseToken: `${held.leaseToken}-forged` }),
  },
  {
    name: "forged generation",
    leavesLiveLease: true,
    make: (_h, held) => Promise.resolve({ ...held, fencingToken: held.fencingToken + 1 }),
  },
];

/**
 * A session with claims of the holder's generation, open items, and a pending tool call. The
 * holder is a local process that is provably dead, so a reclaim naming it is refused only for
 * not being the current holder.
 */
async function seed(h: StoreHarness, ttlMs: number): Promise<{ held: LeaseFence; seeded: Seeded }> {
  const { store } = h;
  const sid = freshSessionId();
  await store.enqueueWork(workDraft(sid, "claimed"));
  await store.enqueueWork(workDraft(sid, "open"));
  await store.submitInput(inputDraft(sid, "claimed"));
  await store.submitInput(inputDraft(sid, "open"));
  await store.submitInput(inputDraft(sid, "steer", activeTurn(TURN, "after_work")));
  const held = fenceOf(await acquire(store, sid, deadLocalOwner("holder"), ttlMs));
  const work = await store.claimReadyWork(held, "idle", 1);
  const inputs = await store.claimInputs(held, { kind: "idle" }, 1);
  if (!work || !inputs) throw new Error("seeding claimed nothing");
  await store.recordToolCalls(held, TURN, [{ kind: "result", callId: "c1" }]);
  return { held, seeded: { sid, work, inputs } };
}

async function expectSuperseded(row: FencedRow, run: () => Promise<unknown>): Promise<void> {
  let caught: unknown;
  try {
    await run();
  } catch (error) {
    caught = error;
  }
  expect(
    isTetherError(caught, "queued_work_claim_superseded") ||
      isTetherError(caught, "turn_input_claim_superseded"),
    `${rowName(row)} must be refused as superseded, got ${String(caught)}`,
  ).toBe(true);
}

async function expectRefused(
  row: FencedRow,
  kind: FenceKind,
  store: RuntimeStore,
  stale: LeaseFence,
  seeded: Seeded,
): Promise<void> {
  const run = () => row.run(store, stale, seeded);
  const also = kind.ownExpired ? (row.ownExpiredAlso ?? []) : [];
  switch (row.refusal) {
    case "session_execution_lease_expired": {
      const code = row.refusal;
      const answer = await run().then(
        () => "accepted",
        (error: unknown) => (isTetherError(error, code) ? code : String(error)),
      );
      expect(answer, rowName(row)).toBe(code);
      return;
    }
    case "claim_superseded":
      return expectSuperseded(row, run);
    case "not_held":
      expect([row.refusal, ...also], rowName(row)).toContain(
        ((await run()) as { kind: string }).kind,
      );
      return;
    case "renewal_expired":
      expect(await run(), rowName(row)).toEqual([{ kind: "expired" }]);
      return;
    case "busy":
      expect(((await run()) as { kind: string }).kind, rowName(row)).toBe("busy");
      return;
  }
}

const applies = (row: FencedRow, kind: FenceKind) =>
  !(row.generationOnly && kind.tokenOnly) && !(row.needsLiveLease && !kind.leavesLiveLease);

export function describeFenceLaws(factory: StoreFactory): void {
  describe("stale fences (law 12, every fenced operation × every kind of stale fence)", () => {
    const harness = useStoreHarness(factory);

    test("the table has a row for every fenced operation of the port, and each runs on the store", () => {
      const { store } = harness();
      const listed = new Set(FENCED_OPERATIONS.map((row) => row.operation));
      expect([...listed].sort()).toEqual([...FENCED_STORE_OPERATIONS].sort());
      for (const operation of FENCED_STORE_OPERATIONS) {
        expect(typeof store[operation], operation).toBe("function");
      }
    });

    test("every row meets an expired lease and a lease a newer generation holds", () => {
      for (const row of FENCED_OPERATIONS) {
        const met = STALE_FENCE_KINDS.filter((kind) => applies(row, kind));
        expect(
          met.some((kind) => kind.expires === true),
          rowName(row),
        ).toBe(true);
        expect(
          met.some((kind) => kind.superseded === true),
          rowName(row),
        ).toBe(true);
      }
    });

    for (const kind of STALE_FENCE_KINDS) {
      test(`a fence ${kind.name} is refused by every fenced operation and changes nothing`, async () => {
        const h = harness();
        const rows = FENCED_OPERATIONS.filter((row) => applies(row, kind));
        // One session per row: a refusal that clears the holder's own expired lease record (a
        // release may) must not hide how the next operation treats that lease.
        const seeds = [];
        for (const _row of rows) seeds.push(await seed(h, LONG_TTL_MS));
        await kind.settle?.(
          h,
          seeds.map((s) => s.held),
        );
        for (const [i, row] of rows.entries()) {
          const { held, seeded } = seeds[i] ?? expect.fail("no seed for a row");
          const stale = await kind.make(h, held);
          const before = await snapshot(h.store, seeded.sid);
          await expectRefused(row, kind, h.store, stale, seeded);
          expect(
            await snapshot(h.store, seeded.sid),
            `${rowName(row)} changed the session`,
          ).toEqual(before);
        }
      });
    }
  });

  describe("law 4: a completion fails and changes nothing for every reason its claim is stale", () => {
    const harness = useStoreHarness(factory);

    async function expectCompletionRefused(
      store: RuntimeStore,
      sid: SessionId,
      complete: () => Promise<unknown>,
    ): Promise<void> {
      const before = await snapshot(store, sid);
      let caught: unknown;
      try {
        await complete();
      } catch (error) {
        caught = error;
      }
      expect(
        isTetherError(caught, "queued_work_claim_superseded") ||
          isTetherError(caught, "turn_input_claim_superseded"),
        `expected a superseded claim, got ${String(caught)}`,
      ).toBe(true);
      expect(await snapshot(store, sid)).toEqual(before);
    }

    /** Completing the seeded work claim, then the seeded input claim, from `head`: both refused. */
    async function expectBothCompletionsRefused(
      store: RuntimeStore,
      seeded: Seeded,
      head: number,
    ): Promise<void> {
      const { sid, work, inputs } = seeded;
      await expectCompletionRefused(store, sid, () =>
        store.commit(commitDraft(sid, head, { completeQueueClaims: [queueClaimCompletion(work)] })),
      );
      await expectCompletionRefused(store, sid, () =>
        store.commit(
          commitDraft(sid, head, { completeInputClaims: [inputClaimCompletion(inputs)] }),
        ),
      );
    }

    test("another generation holds the lease", async () => {
      const h = harness();
      const { held, seeded } = await seed(h, SHORT_TTL_MS);
      await h.advanceTime(PAST_SHORT_TTL_MS);
      await acquire(h.store, seeded.sid, opaqueOwner("successor"), LONG_TTL_MS);
      const head = (await h.store.loadSession(seeded.sid))?.headRevision ?? 0;
      await expectBothCompletionsRefused(h.store, seeded, head);
      expect(held.fencingToken).toBeLessThan(
        (await h.store.currentLease(seeded.sid))?.fencingToken ?? 0,
      );
    });

    test("no lease is live at all", async () => {
      const h = harness();
      const { held, seeded } = await seed(h, LONG_TTL_MS);
      await h.store.releaseLease(held);
      const head = (await h.store.loadSession(seeded.sid))?.headRevision ?? 0;
      await expectBothCompletionsRefused(h.store, seeded, head);
    });

    test("a later claim of the same generation replaced the claim id on the items", async () => {
      const h = harness();
      const sid = freshSessionId();
      await h.store.enqueueWork(workDraft(sid, "w"));
      const held = fenceOf(await acquire(h.store, sid, opaqueOwner("a"), LONG_TTL_MS));
      const first = await h.store.claimReadyWork(held, "idle", 1);
      if (!first) throw new Error("nothing claimed");
      const again = await h.store.claimWorkByIds(
        held,
        first.batches.map((b) => b.batchId),
      );
      expect(again.claim?.claimId).not.toBe(first.claimId);
      const head = (await h.store.loadSession(sid))?.headRevision ?? 0;
      await expectCompletionRefused(h.store, sid, () =>
        h.store.commit(
          commitDraft(sid, head, { completeQueueClaims: [queueClaimCompletion(first)] }),
        ),
      );
    });

    test("an earlier commit already settled the items", async () => {
      const h = harness();
      const { seeded } = await seed(h, LONG_TTL_MS);
      const sid = seeded.sid;
      const head = (await h.store.loadSession(sid))?.headRevision ?? 0;
      await h.store.commit(
        commitDraft(sid, head, {
          completeQueueClaims: [queueClaimCompletion(seeded.work)],
          completeInputClaims: [inputClaimCompletion(seeded.inputs)],
        }),
      );
      await expectBothCompletionsRefused(h.store, seeded, head + 1);
    });
  });

  describe("law 10: a claim racing a takeover ends in one consistent order", () => {
    const harness = useStoreHarness(factory);
    const RUNS = 10;

    test(`over ${RUNS} races the successor's claim is the one that counts`, async () => {
      const { store } = harness();
      for (let run = 0; run < RUNS; run++) {
        const sid = freshSessionId();
        await store.enqueueWork(workDraft(sid, `w${run}`));
        const stale = fenceOf(
          await acquire(store, sid, deadLocalOwner(`stale-${run}`), LONG_TTL_MS),
        );
        let live: LeaseFence | undefined;
        // The stale holder claims while a successor takes the session over and claims too.
        const [staleClaim, liveClaim] = await Promise.allSettled([
          store.claimReadyWork(stale, "idle", 1),
          (async () => {
            const taken = await store.reclaimLease(
              sid,
              localClaimant(`live-${run}`),
              stale,
              LONG_TTL_MS,
            );
            if (taken.kind !== "acquired")
              throw new Error("the takeover of a dead holder must acquire");
            live = fenceOf(taken.lease);
            return store.claimReadyWork(live, "idle", 1);
          })(),
        ]);
        if (liveClaim.status !== "fulfilled" || !liveClaim.value || !live) {
          throw new Error("the successor must claim the batch");
        }
        expect(live.fencingToken).toBeGreaterThan(stale.fencingToken);
        // Whatever the order, the batch ends claimed by the successor, whose completion commits;
        // a stale claim (if it ran first) can no longer complete.
        expect((await store.listWork(sid)).map((b) => b.claimFencingToken)).toEqual([
          live.fencingToken,
        ]);
        if (staleClaim.status === "fulfilled" && staleClaim.value) {
          const head = (await store.loadSession(sid))?.headRevision ?? 0;
          const completion = queueClaimCompletion(staleClaim.value);
          await expectTetherError(
            () => store.commit(commitDraft(sid, head, { completeQueueClaims: [completion] })),
            "queued_work_claim_superseded",
          );
        }
        const head = (await store.loadSession(sid))?.headRevision ?? 0;
        await store.commit(
          commitDraft(sid, head, { completeQueueClaims: [queueClaimCompletion(liveClaim.value)] }),
        );
        expect(await store.listWork(sid)).toEqual([]);
      }
    });
  });
}
