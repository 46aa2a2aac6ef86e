// The runtime's spend guard (ADR 0016) over a memory store: the session budget counts committed
// spend plus the running turn, the tenant budget reads and charges the store's counter, and a
// cost limit on a model without a price refuses the call.
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import type { SessionSnapshot } from "../../../../src/domain/session.js";
import { usage } from "../../../../src/domain/usage.js";
import type { BudgetPolicy } from "../../../../src/ports/budget-guard.js";
import { createMemoryStore } from "../../../../src/store/memory/memory-store.js";
import { createBudgetGuard, turnCost } from "../../../../src/runtime/limits/budget-guard.js";
import { silentLogger } from "../../../../src/runtime/deps.js";

const sid = "acme:s1" as SessionId;
// 2 micros per input token, 10 per output token.
const PRICE = {
  inputMicrosPerMillion: 2_000_000,
  outputMicrosPerMillion: 10_000_000,
  cacheReadMicrosPerMillion: 1_000_000,
  cacheWriteMicrosPerMillion: 2_000_000,
};

function policyWith(tenants: BudgetPolicy["tenants"] = new Map()): BudgetPolicy {
  return {
    defaultModel: "m-default",
    prices: new Map([["m1", PRICE]]),
    tenants,
    store: createMemoryStore(),
  };
}

const snapshot = (input: number, output: number, costMicros?: number): SessionSnapshot => ({
  sessionId: sid,
  headRevision: 3,
  turnIndex: 1,
  messages: [],
  messagesFrom: 0,
  transcriptEpoch: "e",
  usage: usage({ inputTokens: input, outputTokens: output }),
  ...(costMicros !== undefined && { costMicros }),
  metadata: {},
});

const base = { sessionId: sid, nowMs: () => Date.UTC(2026, 11, 5, 7), logger: silentLogger };

describe("runtime spend guard", () => {
  it("prices a turn at its model, rounding up; '*' prices any other model", () => {
    const policy = policyWith();
    const u = usage({ inputTokens: 3, outputTokens: 1, cacheReadTokens: 1 });
    expect(turnCost(policy, { model: "m1" }, u)).toBe(17);
    expect(turnCost(policy, { model: "other" }, u)).toBeUndefined();
    const star: BudgetPolicy = {
      ...policy,
      prices: new Map([["*", { ...PRICE, outputMicrosPerMillion: 1 }]]),
    };
    expect(turnCost(star, {}, usage({ outputTokens: 3 }))).toBe(1);
  });

  it("is absent when neither the session nor the tenant has a budget", () => {
    const guard = createBudgetGuard({
      ...base,
      policy: policyWith(),
      settings: {},
      snapshot: undefined,
    });
    expect(guard).toBeUndefined();
  });

  it("the session budget counts committed spend plus the running turn", async () => {
    const guard = createBudgetGuard({
      ...base,
      policy: policyWith(),
      settings: { model: "m1", budget: { maxOutputTokens: 50, maxCostMicros: 1000 } },
      snapshot: snapshot(100, 40, 600),
    });
    expect(await guard?.beforeModelCall(usage({ outputTokens: 9 }))).toEqual({ go: true });
    expect(await guard?.beforeModelCall(usage({ outputTokens: 10 }))).toEqual({
      go: false,
      reached: { scope: "session", limit: "output_tokens", max: 50, spent: 50 },
    });
    // 600 committed + 175 input tokens at 2 + 5 output at 10 = 1000.
    expect(await guard?.beforeModelCall(usage({ inputTokens: 175, outputTokens: 5 }))).toEqual({
      go: false,
      reached: { scope: "session", limit: "cost_micros", max: 1000, spent: 1000 },
    });
  });

  it("a cost limit on a model without a price refuses the call, naming the model", async () => {
    const guard = createBudgetGuard({
      ...base,
      policy: policyWith(),
      settings: { budget: { maxCostMicros: 1000 } },
      snapshot: snapshot(0, 0, 40),
    });
    expect(await guard?.beforeModelCall(usage({}))).toEqual({
      go: false,
      reached: {
        scope: "session",
        limit: "cost_micros",
        max: 1000,
        spent: 40,
        unpricedModel: "m-default",
      },
    });
  });

  it("the tenant budget reads the tenant's day and is charged each call's cost", async () => {
    const policy = policyWith(new Map([["acme", { maxCostMicros: 100, period: "day" as const }]]));
    const guard = createBudgetGuard({
      ...base,
      policy,
      settings: { model: "m1" },
      snapshot: undefined,
    });
    expect(await guard?.beforeModelCall(usage({}))).toEqual({ go: true });
    await guard?.afterModelCall(
      usage({ inputTokens: 20, outputTokens: 3 }),
      usage({ inputTokens: 20, outputTokens: 3 }),
    );
    const read = { tenant: "acme", window: "2026-12-05", costMicros: 0 };
    expect(await policy.store.chargeTenantSpend(read)).toBe(70);
    await guard?.afterModelCall(
      usage({ outputTokens: 3 }),
      usage({ inputTokens: 20, outputTokens: 6 }),
    );
    expect(await policy.store.chargeTenantSpend(read)).toBe(100);
    expect(await guard?.beforeModelCall(usage({ inputTokens: 20, outputTokens: 6 }))).toEqual({
      go: false,
      reached: { scope: "tenant", limit: "cost_micros", max: 100, spent: 100 },
    });
  });
});
