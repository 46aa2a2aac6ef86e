// Tenant quotas (ADR 0015): admission takes a slot and counts the turn only when every limit has
// room, in one step, and a refusal changes nothing; re-admitting the same holder is idempotent;
// slots live one TTL unless renewed; tokens are counted after the fact and checked before.
// Runs on memory, Redis and Redis Cluster; not on the wire (ADR 0015).
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import type { TenantQuota } from "../../../src/domain/quotas.js";
import type { QuotaStore } from "../../../src/ports/quota-store.js";
import { expectTetherError, violationFields } from "../support/expectations.js";
import { LONG_TTL_MS, PAST_SHORT_TTL_MS, SHORT_TTL_MS } from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const freshTenant = (): string => `t-${randomUUID().slice(0, 8)}`;
const slots = (max: number): TenantQuota => ({ concurrent_turns: { max, mode: "queue" } });
/** How close to a window's end a counting law waits the window out instead of starting. */
const WINDOW_EDGE_MS = 5_000;

export function describeQuotaLaws(factory: StoreFactory): void {
  describe("tenant quotas", () => {
    const harness = useStoreHarness(factory);
    const quotas = (): QuotaStore => {
      const q = harness().quotas;
      if (!q) throw new Error("this backend's harness has no quota store");
      return q;
    };
    const admit = (tenant: string, holder: string, limits: TenantQuota, ttl = LONG_TTL_MS) =>
      quotas().admitTurn({ tenant, holder, limits, slotTtlMs: ttl });
    // The counters are kept per fixed minute and day of the store's clock, so a law that counts
    // within "this minute" starts only where the window has room: on a real clock a law that
    // straddled a minute's end would see the count start again (a reset, not a broken law).
    const inOneWindow = async (): Promise<void> => {
      const usage = await quotas().readQuotaUsage(freshTenant());
      const left = Math.min(usage.minuteResetAtMs, usage.dayResetAtMs) - usage.nowMs;
      if (left < WINDOW_EDGE_MS) await harness().advanceTime(left);
    };

    test("slots are taken up to concurrent_turns; the next is refused and changes nothing", async () => {
      await inOneWindow();
      const tenant = freshTenant();
      expect(await admit(tenant, "s1/t1", slots(2))).toEqual({
        kind: "admitted",
        readmitted: false,
      });
      expect(await admit(tenant, "s2/t1", slots(2))).toEqual({
        kind: "admitted",
        readmitted: false,
      });
      const before = await quotas().readQuotaUsage(tenant);
      const refused = await admit(tenant, "s3/t1", slots(2));
      expect(refused).toMatchObject({ kind: "refused", limit: "concurrent_turns" });
      // The earliest slot frees by its expiry at the latest.
      const retry = refused.kind === "refused" ? refused.retryAfterMs : -1;
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(LONG_TTL_MS);
      const after = await quotas().readQuotaUsage(tenant);
      expect(after.runningTurns).toBe(2);
      expect(after.turnsThisMinute).toBe(before.turnsThisMinute);
    });

    test("re-admitting a holder with a live slot is admitted again, neither taking a slot nor counting a turn", async () => {
      await inOneWindow();
      const tenant = freshTenant();
      const limits: TenantQuota = { ...slots(1), turns_per_minute: { max: 5, mode: "reject" } };
      expect(await admit(tenant, "s1/t1", limits)).toEqual({ kind: "admitted", readmitted: false });
      expect(await admit(tenant, "s1/t1", limits)).toEqual({ kind: "admitted", readmitted: true });
      const usage = await quotas().readQuotaUsage(tenant);
      expect(usage.runningTurns).toBe(1);
      expect(usage.turnsThisMinute).toBe(1);
    });

    test("concurrent admissions of one tenant never take more slots than the limit", async () => {
      const tenant = freshTenant();
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => admit(tenant, `s${i}/t1`, slots(3))),
      );
      expect(outcomes.filter((o) => o.kind === "admitted")).toHaveLength(3);
      expect((await quotas().readQuotaUsage(tenant)).runningTurns).toBe(3);
    });

    test("a released slot frees room at once; releasing again is false", async () => {
      const tenant = freshTenant();
      await admit(tenant, "s1/t1", slots(1));
      expect(await admit(tenant, "s2/t1", slots(1))).toMatchObject({ kind: "refused" });
      expect(await quotas().releaseTurnSlot(tenant, "s1/t1")).toBe(true);
      expect(await quotas().releaseTurnSlot(tenant, "s1/t1")).toBe(false);
      expect(await admit(tenant, "s2/t1", slots(1))).toEqual({
        kind: "admitted",
        readmitted: false,
      });
    });

    test("a slot not renewed frees after its TTL; renewing keeps it; a gone slot is not renewed back", async () => {
      const { advanceTime } = harness();
      const tenant = freshTenant();
      await admit(tenant, "kept", slots(2), SHORT_TTL_MS);
      await admit(tenant, "lapsed", slots(2), SHORT_TTL_MS);
      await advanceTime(SHORT_TTL_MS / 3);
      expect(await quotas().renewTurnSlots(tenant, ["kept"], LONG_TTL_MS)).toEqual([true]);
      await advanceTime(PAST_SHORT_TTL_MS);
      expect((await quotas().readQuotaUsage(tenant)).runningTurns).toBe(1);
      expect(await quotas().renewTurnSlots(tenant, ["lapsed", "kept"], LONG_TTL_MS)).toEqual([
        false,
        true,
      ]);
      expect((await quotas().readQuotaUsage(tenant)).runningTurns).toBe(1);
      // The lapsed holder's room went to whoever asks next.
      expect(await admit(tenant, "other", slots(2))).toEqual({
        kind: "admitted",
        readmitted: false,
      });
      expect(await admit(tenant, "lapsed", slots(2))).toMatchObject({ kind: "refused" });
    });

    test("a holder whose slot expired is admitted afresh: a new slot, counted as a turn again", async () => {
      await inOneWindow();
      const { advanceTime } = harness();
      const tenant = freshTenant();
      const limits: TenantQuota = { ...slots(1), turns_per_minute: { max: 10, mode: "queue" } };
      await admit(tenant, "s1/t1", limits, SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      expect(await admit(tenant, "s1/t1", limits)).toEqual({ kind: "admitted", readmitted: false });
      const usage = await quotas().readQuotaUsage(tenant);
      expect(usage.runningTurns).toBe(1);
      expect(usage.turnsThisMinute).toBe(2);
    });

    test("turns_per_minute counts admitted turns and refuses until the minute window ends", async () => {
      await inOneWindow();
      const tenant = freshTenant();
      const limits: TenantQuota = { turns_per_minute: { max: 2, mode: "queue" } };
      await admit(tenant, "a", limits);
      await quotas().releaseTurnSlot(tenant, "a");
      await admit(tenant, "b", limits);
      const refused = await admit(tenant, "c", limits);
      expect(refused).toMatchObject({ kind: "refused", limit: "turns_per_minute" });
      const retry = refused.kind === "refused" ? refused.retryAfterMs : -1;
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(60_000);
      const usage = await quotas().readQuotaUsage(tenant);
      expect(usage.turnsThisMinute).toBe(2);
      expect(usage.minuteResetAtMs - usage.nowMs).toBeGreaterThan(0);
      expect(usage.minuteResetAtMs - usage.nowMs).toBeLessThanOrEqual(60_000);
    });

    test("tokens counted go against the minute and the day; over a limit, checks and admissions refuse", async () => {
      await inOneWindow();
      const tenant = freshTenant();
      const perMinute: TenantQuota = { tokens_per_minute: { max: 100, mode: "queue" } };
      const perDay: TenantQuota = { tokens_per_day: { max: 150, mode: "queue" } };
      await quotas().countTokens(tenant, 60);
      expect(await quotas().checkTokenQuota(tenant, perMinute)).toEqual({ kind: "within" });
      await quotas().countTokens(tenant, 40);
      const usage = await quotas().readQuotaUsage(tenant);
      expect(usage.tokensThisMinute).toBe(100);
      expect(usage.tokensToday).toBe(100);
      const over = await quotas().checkTokenQuota(tenant, perMinute);
      expect(over).toMatchObject({ kind: "over", limit: "tokens_per_minute" });
      expect(await admit(tenant, "x", perMinute)).toMatchObject({
        kind: "refused",
        limit: "tokens_per_minute",
      });
      expect(await quotas().checkTokenQuota(tenant, perDay)).toEqual({ kind: "within" });
      await quotas().countTokens(tenant, 50);
      const day = await quotas().checkTokenQuota(tenant, perDay);
      expect(day).toMatchObject({ kind: "over", limit: "tokens_per_day" });
      const retry = day.kind === "over" ? day.retryAfterMs : -1;
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(24 * 60 * 60_000);
      expect((await quotas().readQuotaUsage(tenant)).runningTurns).toBe(0);
    });

    test("tenants do not share counters", async () => {
      const a = freshTenant();
      const b = freshTenant();
      await admit(a, "s1/t1", slots(1));
      await quotas().countTokens(a, 500);
      expect(await admit(b, "s1/t1", slots(1))).toEqual({ kind: "admitted", readmitted: false });
      const usage = await quotas().readQuotaUsage(b);
      expect(usage.runningTurns).toBe(1);
      expect(usage.tokensToday).toBe(0);
    });

    test("a bad tenant, holder or limit is invalid_argument naming the field", async () => {
      const tenant = freshTenant();
      const bad = async (fn: () => Promise<unknown>) =>
        violationFields(await expectTetherError(fn, "invalid_argument"));
      expect(await bad(() => quotas().readQuotaUsage("{x}"))).toEqual(["tenant"]);
      expect(await bad(() => admit(tenant, "", slots(1)))).toEqual(["holder"]);
      expect(
        await bad(() => admit(tenant, "h", { concurrent_turns: { max: 0, mode: "queue" } })),
      ).toEqual(["limits.concurrent_turns.max"]);
      expect(
        await bad(() =>
          admit(tenant, "h", {
            turns_per_minute: { max: 1, mode: "later" as unknown as "queue" },
          }),
        ),
      ).toEqual(["limits.turns_per_minute.mode"]);
      expect(await bad(() => quotas().countTokens(tenant, -1))).toEqual(["tokens"]);
      expect((await quotas().readQuotaUsage(tenant)).runningTurns).toBe(0);
    });
  });
}
