// Bad input is refused before any backend sees it: a typed invalid_argument (or
// unknown_batch_ids) naming the offending field, and nothing changes.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { parseBatchId } from "../../../src/domain/ids.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { acquire, expectTetherError, violationFields } from "../support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

/** Bypasses the id parser, as a caller over the wire would. */
const rawSession = (raw: string): SessionId => raw as SessionId;

const PAYLOAD_LIMIT = 64;

function expectFieldNamed(fields: string[], pattern: RegExp): void {
  expect(
    fields.some((f) => pattern.test(f)),
    `violations ${JSON.stringify(fields)}`,
  ).toBe(true);
}

export function describeBadInputLaws(factory: StoreFactory): void {
  describe("bad input", () => {
    const harness = useStoreHarness(factory, { limits: { maxPayloadBytes: PAYLOAD_LIMIT } });

    test("bad input: an empty session id is invalid_argument naming session_id", async () => {
      const { store } = harness();
      const empty = rawSession("");
      const calls: (() => Promise<unknown>)[] = [
        () => store.tryClaimLease(empty, opaqueOwner("a"), LONG_TTL_MS),
        () => store.enqueueWork(workDraft(empty, "w")),
        () => store.submitInput(inputDraft(empty, "i")),
        () => store.commit(commitDraft(empty, 0)),
        () => store.listWork(empty),
      ];
      for (const call of calls) {
        const error = await expectTetherError(call, "invalid_argument");
        expectFieldNamed(violationFields(error), /session_id$/);
      }
    });

    test("bad input: a session id over the backend's limit (200 in the store) is invalid_argument; the limit is accepted", async () => {
      const { store, maxSessionIdLength = 200 } = harness();
      const oversize = rawSession(`s${"x".repeat(maxSessionIdLength)}`);
      const error = await expectTetherError(
        () => store.tryClaimLease(oversize, opaqueOwner("a"), LONG_TTL_MS),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(error), /session_id$/);
      const enqueueError = await expectTetherError(
        () => store.enqueueWork(workDraft(oversize, "w")),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(enqueueError), /session_id$/);

      const longest = rawSession(`s${"x".repeat(maxSessionIdLength - 1)}`);
      const lease = await acquire(store, longest, opaqueOwner("a"), LONG_TTL_MS);
      expect(lease.sessionId).toBe(longest);
    });

    test("bad input: a negative ttl is invalid_argument naming ttl_ms", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const claimError = await expectTetherError(
        () => store.tryClaimLease(sid, opaqueOwner("a"), -1),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(claimError), /ttl_ms$/);
      expect(await store.currentLease(sid)).toBeUndefined();

      const held = await acquire(store, sid, opaqueOwner("a"), 1_000);
      const renewError = await expectTetherError(
        () => store.renewLease(fenceOf(held), -5),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(renewError), /ttl_ms$/);
      expect((await store.currentLease(sid))?.expiresAtMs).toBe(held.expiresAtMs);

      const reclaimError = await expectTetherError(
        () => store.reclaimLease(sid, opaqueOwner("b"), fenceOf(held), -1),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(reclaimError), /ttl_ms$/);
    });

    test("bad input: unknown batch ids are unknown_batch_ids naming batch_ids", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const error = await expectTetherError(
        () =>
          store.claimWorkByIds(fenceOf(held), [parseBatchId("ghost-1"), parseBatchId("ghost-2")]),
        "unknown_batch_ids",
      );
      expectFieldNamed(violationFields(error), /batch_ids/);
    });

    test("bad input: an empty batch id list is invalid_argument naming batch_ids", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const error = await expectTetherError(
        () => store.claimWorkByIds(fenceOf(held), []),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(error), /batch_ids/);
    });

    test("bad input: a queued-work payload over the configured limit is invalid_argument naming payload", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const error = await expectTetherError(
        () => store.enqueueWork(workDraft(sid, "x".repeat(PAYLOAD_LIMIT + 1))),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(error), /^payload$/);
      // The limit counts UTF-8 bytes: 33 two-byte characters are 66 bytes.
      const multiByte = await expectTetherError(
        () => store.enqueueWork(workDraft(sid, "é".repeat(33))),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(multiByte), /^payload$/);
      expect(await store.listWork(sid)).toEqual([]);
      const atLimit = await store.enqueueWork(workDraft(sid, "x".repeat(PAYLOAD_LIMIT)));
      expect(atLimit.batch.payload).toHaveLength(PAYLOAD_LIMIT);
    });

    test("bad input: a turn-input payload over the configured limit is invalid_argument naming payload", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const error = await expectTetherError(
        () => store.submitInput(inputDraft(sid, "y".repeat(PAYLOAD_LIMIT + 1))),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(error), /^payload$/);
      expect(await store.listInputs(sid)).toEqual([]);
      const atLimit = await store.submitInput(inputDraft(sid, "y".repeat(PAYLOAD_LIMIT)));
      expect(atLimit.input.payload).toHaveLength(PAYLOAD_LIMIT);
    });

    test("bad input: a commit message over the configured limit is invalid_argument naming it", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const error = await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 0, { appendMessages: ["ok", "z".repeat(PAYLOAD_LIMIT + 1)] }),
          ),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(error), /^append_messages\[1\]$/);
      expect(await store.loadSession(sid)).toBeUndefined();
    });

    test("bad input: a negative expected head revision is invalid_argument", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const error = await expectTetherError(
        () => store.commit(commitDraft(sid, -1)),
        "invalid_argument",
      );
      expectFieldNamed(violationFields(error), /expected_head_revision$/);
      expect(await store.loadSession(sid)).toBeUndefined();
    });

    test("bad input: a claim of zero batches is invalid_argument", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "w"));
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const error = await expectTetherError(
        () => store.claimReadyWork(fenceOf(held), "idle", 0),
        "invalid_argument",
      );
      expect(error.violations.length).toBeGreaterThan(0);
      expect((await store.listWork(sid)).map((b) => b.state)).toEqual(["ready"]);
    });
  });
}
