// A turn's charges (ADR 0038): where the commit carries them, a call's tokens and cost are held
// and the next call's checks see them charged first; the spend a turn start read answers the
// first budget check without a step; elsewhere every charge is its own step at once.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import type { TenantCharge } from "../../../../src/ports/budget-guard.js";
import { createTurnCharges } from "../../../../src/runtime/limits/turn-charges.js";

function spendStore() {
  const calls: TenantCharge[] = [];
  let total = 0;
  return {
    calls,
    store: {
      chargeTenantSpend: (charge: TenantCharge) => {
        calls.push(charge);
        total += charge.costMicros;
        return Promise.resolve(total);
      },
    },
  };
}

const quiet = { warn: () => undefined };
const sessionId = "acme:s" as SessionId;

describe("turn charges", () => {
  test("carried in the commit: the cost is held, charged with the next read, and the rest goes in the commit", async () => {
    const spend = spendStore();
    const charges = createTurnCharges({
      sessionId,
      store: { chargesInCommit: () => true },
      spend: spend.store,
      logger: quiet,
    });
    charges.primeSpend({ window: "total", spent: 7 });
    // The first check reads what the start's step read: no step.
    expect(await charges.readSpend("total")).toBe(7);
    await charges.chargeSpend("total", 200);
    expect(spend.calls).toEqual([]);
    // The next check charges the held cost and reads the total in one step.
    expect(await charges.readSpend("total")).toBe(200);
    expect(spend.calls).toEqual([{ tenant: "acme", window: "total", costMicros: 200 }]);
    await charges.chargeSpend("total", 50);
    charges.holdSlot("acme:s/t1");
    expect(charges.forCommit()).toEqual({
      tenant: "acme",
      releaseSlot: "acme:s/t1",
      spend: { window: "total", costMicros: 50 },
    });
    charges.committed();
    await charges.settle();
    expect(spend.calls).toHaveLength(1);
    expect(charges.forCommit()).toBeUndefined();
  });

  test("a primed read of another window, or with a cost held, goes to the store", async () => {
    const spend = spendStore();
    const charges = createTurnCharges({
      sessionId,
      store: { chargesInCommit: () => true },
      spend: spend.store,
      logger: quiet,
    });
    charges.primeSpend({ window: "2026-12-06", spent: 7 });
    expect(await charges.readSpend("2026-12-07")).toBe(0);
    expect(spend.calls).toEqual([{ tenant: "acme", window: "2026-12-07", costMicros: 0 }]);
  });

  test("not carried: each charge is its own step at once, and the commit carries nothing", async () => {
    const spend = spendStore();
    const charges = createTurnCharges({
      sessionId,
      store: { chargesInCommit: () => false },
      spend: spend.store,
      logger: quiet,
    });
    await charges.chargeSpend("total", 200);
    expect(spend.calls).toEqual([{ tenant: "acme", window: "total", costMicros: 200 }]);
    charges.holdSlot("acme:s/t1");
    expect(charges.forCommit()).toBeUndefined();
  });
});
