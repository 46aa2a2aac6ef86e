// Webhooks folded into the commit (ADR 0021 "Folded into the commit"): where the store folds the
// outbox (memory, a standalone or Sentinel Redis), a commit that writes outbox rows also writes
// the hint's expect and claims the outbox's due rows for a deliverer's token in its own step,
// reading the tenant's endpoints version there; a refused or replayed commit does neither. Where
// it cannot (Cluster: the hint and the tenant's version live in other slots), the fold is
// ignored and the runtime takes the separate steps.
import { describe, expect, test } from "vitest";
import { type SessionId } from "../../../src/domain/ids.js";
import type { RuntimeCommit } from "../../../src/domain/session.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import { expectTetherError, violationFields } from "../support/expectations.js";
import { commitDraft, LONG_TTL_MS } from "../support/fixtures.js";
import {
  tenantSession as tenantSession,
  webhookEvent as event,
} from "../support/webhook-fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const FAR_FUTURE_MS = 8_000_000_000_000;
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** A commit writing `ids` with the fold: the expect far ahead, the claim for `token`. */
function folded(sid: SessionId, head: number, ids: string[], token: string): RuntimeCommit {
  return commitDraft(sid, head, {
    webhookEvents: ids.map((id) => event(sid, id)),
    outboxFold: {
      nowMs: Date.now(),
      dueAtMs: FAR_FUTURE_MS,
      claim: { claimToken: token, leaseMs: LONG_TTL_MS, max: 10 },
    },
  });
}

/** `folds`: whether this backend folds the outbox into the commit (not Cluster). */
export function describeWebhookFoldLaws(factory: StoreFactory, folds: boolean): void {
  describe("webhooks folded into the commit (ADR 0021)", () => {
    const harness = useStoreHarness(factory);
    const parts = () => {
      const { store, webhooks } = harness();
      if (!webhooks) throw new Error("this backend's harness has no webhook store");
      expect(store.foldsOutbox ?? false).toBe(folds);
      return { store, hooks: webhooks as WebhookStore };
    };

    test("a commit's fold writes the hint with its rows and claims the due ones for the token, with the tenant's endpoints version", async () => {
      const { store, hooks } = parts();
      const { tenant, sid } = tenantSession("fold");
      // A hint due already: the fold's expect moves it a lease ahead (here: far ahead).
      await hooks.noteOutbox(sid, 0);
      await hooks.createEndpoint({
        tenant,
        endpointId: "ep-1",
        url: "https://hooks.example.com/tether",
        eventTypes: [],
        secret: SECRET,
        createdAtMs: 1_700_000_000_000,
      });
      const receipt = await store.commit(folded(sid, 0, ["msg_a", "msg_b"], "mine"));
      const probe = await hooks.claimOutbox(sid, "probe", LONG_TTL_MS, 10);
      expect(probe.remaining).toBe(2);
      if (!folds) {
        // Ignored: the rows are written, nothing is claimed, the hint is left as it was.
        expect(receipt.outbox).toBeUndefined();
        expect(probe.claims).toHaveLength(2);
        expect(await hooks.dueOutboxes(10_000)).toContain(sid);
        return;
      }
      const version = (await hooks.endpointsSince(tenant)).version;
      expect(version).toBeGreaterThan(0);
      expect(receipt.outbox?.endpointsVersion).toBe(version);
      expect(receipt.outbox?.report.remaining).toBe(2);
      const claims = receipt.outbox?.report.claims ?? [];
      expect(claims.map((c) => c.row.event.id).sort()).toEqual(["msg_a", "msg_b"]);
      expect(claims.every((c) => c.claimToken === "mine" && c.row.attempts === 0)).toBe(true);
      // Held by the commit's token: nobody else takes them, and that token settles them.
      expect(probe.claims).toEqual([]);
      expect(await hooks.dueOutboxes(10_000)).not.toContain(sid);
      const done = { kind: "done" as const };
      const settlements = ["msg_a", "msg_b"].map((eventId) => ({ eventId, settlement: done }));
      expect((await hooks.settleOutboxBatch(sid, "mine", settlements)).settled).toBe(2);
    });

    test("the version a fold reads moves with every change of the tenant's endpoints", async () => {
      const { store, hooks } = parts();
      const { tenant, sid } = tenantSession("fold");
      const first = await store.commit(folded(sid, 0, ["msg_1"], "mine"));
      await hooks.createEndpoint({
        tenant,
        endpointId: "ep-1",
        url: "https://hooks.example.com/tether",
        eventTypes: [],
        secret: SECRET,
        createdAtMs: 1_700_000_000_000,
      });
      const created = await store.commit(folded(sid, 1, ["msg_2"], "mine"));
      await hooks.updateEndpoint({
        tenant,
        endpointId: "ep-1",
        secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
      });
      const rotated = await store.commit(folded(sid, 2, ["msg_3"], "mine"));
      await hooks.deleteEndpoint(tenant, "ep-1");
      const deleted = await store.commit(folded(sid, 3, ["msg_4"], "mine"));
      const versions = [first, created, rotated, deleted].map((r) => r.outbox?.endpointsVersion);
      if (!folds) {
        expect(versions).toEqual([undefined, undefined, undefined, undefined]);
        return;
      }
      const [v1, v2, v3, v4] = versions as number[];
      expect(v2).toBeGreaterThan(v1 ?? Infinity);
      expect(v3).toBeGreaterThan(v2 ?? Infinity);
      expect(v4).toBeGreaterThan(v3 ?? Infinity);
      expect(v4).toBe((await hooks.endpointsSince(tenant)).version);
    });

    test("a refused or replayed commit's fold claims nothing", async () => {
      const { store, hooks } = parts();
      const { sid } = tenantSession("fold");
      await expectTetherError(
        () => store.commit(folded(sid, 3, ["msg_refused"], "mine")),
        "head_revision_conflict",
      );
      expect(await hooks.claimOutbox(sid, "probe", LONG_TTL_MS, 10)).toEqual({
        claims: [],
        remaining: 0,
      });
      const stamped = (token: string) => ({
        ...folded(sid, 0, ["msg_turn"], token),
        stamp: { operationId: "turn:t1", contentHash: "h1" },
      });
      const applied = await store.commit(stamped("first"));
      const replayed = await store.commit(stamped("second"));
      expect(replayed.replayed).toBe(true);
      expect(replayed.outbox).toBeUndefined();
      expect(applied.outbox?.report.claims.length ?? 0).toBe(folds ? 1 : 0);
      // The replay's token holds nothing: the row is the first commit's (or free, unfolded).
      expect(
        (
          await hooks.settleOutboxBatch(sid, "second", [
            { eventId: "msg_turn", settlement: { kind: "done" } },
          ])
        ).settled,
      ).toBe(0);
    });

    test("a fold with a bad claim is refused naming the field, and the commit changes nothing", async () => {
      const { store, hooks } = parts();
      const { sid } = tenantSession("fold");
      const bad = folded(sid, 0, ["msg_bad"], "mine");
      const claim = { claimToken: "mine", leaseMs: LONG_TTL_MS, max: 0 };
      const error = await expectTetherError(
        () => store.commit({ ...bad, outboxFold: { nowMs: 1, dueAtMs: 2, claim } }),
        "invalid_argument",
      );
      expect(violationFields(error).some((f) => /outbox_fold\.claim\.max$/u.test(f))).toBe(true);
      expect(await store.loadSession(sid)).toBeUndefined();
      expect((await hooks.claimOutbox(sid, "probe", LONG_TTL_MS, 10)).remaining).toBe(0);
    });
  });
}
