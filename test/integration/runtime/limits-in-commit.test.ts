// A turn's tenant charges in its commit (ADR 0038), on memory and on a standalone Redis: a turn of
// two model calls charges the first call's tokens and cost with the separate steps before the
// second call's checks, and the last call's with the quota slot's release in its commit, so the
// tenant's counters hold exactly what the calls used; a commit that fails leaves nothing held:
// its charges go the separate way and the slot is released, and the turn run again is charged
// for its own calls.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, inject, test } from "vitest";
import { leaseExpired } from "../../../src/domain/errors.js";
import type { QuotaConfig } from "../../../src/domain/quotas.js";
import type { CursoredEvent } from "../../../src/domain/session-events.js";
import type { TenantCommitCharges } from "../../../src/domain/tenant-charges.js";
import type { SessionId } from "../../../src/domain/ids.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import type { TenantBudgetStore } from "../../../src/ports/budget-guard.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import { startSweeper } from "../../../src/runtime/background/sweeper.js";
import { createRuntimeHarness, textCommand } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";
import { toolsOf } from "../../unit/engine/helpers.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

const QUOTAS: QuotaConfig = {
  tenants: {
    acme: {
      concurrent_turns: { max: 100, mode: "queue" },
      tokens_per_day: { max: 1_000_000_000, mode: "queue" },
    },
  },
  default: undefined,
};
// 1 micro per input token, 5 per output token: every call below costs 100 + 100 = 200 micros.
const PRICES = new Map([
  [
    "m1",
    {
      inputMicrosPerMillion: 1_000_000,
      outputMicrosPerMillion: 5_000_000,
      cacheReadMicrosPerMillion: 0,
      cacheWriteMicrosPerMillion: 0,
    },
  ],
]);
const CALL_USAGE = {
  inputTokens: 100,
  outputTokens: 20,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
};
const CALL_TOKENS = 120;
const CALL_COST = 200;
const LEASE_TTL_MS = 300;

/** The first call of a turn asks for the `again` tool; the call after its result answers. */
function twoCallProvider() {
  let calls = 0;
  const provider = createScriptedProvider({
    script: (request) => {
      calls++;
      const answered = request.messages.at(-1)?.role === "tool";
      return answered
        ? {
            response: {
              usage: CALL_USAGE,
              fullText: "ok",
              parts: [{ type: "text", text: "ok" }],
            },
          }
        : {
            response: {
              usage: CALL_USAGE,
              parts: [
                { type: "tool_call", callId: `c${calls}`, toolName: "again", argumentsJson: "{}" },
              ],
            },
          };
    },
  });
  return { provider, calls: () => calls };
}

async function collect(events: AsyncIterable<CursoredEvent>): Promise<CursoredEvent[]> {
  const out: CursoredEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** Records what each commit carried; `fail` refuses the first commit that carries charges. */
function recordingCommits(fail: boolean) {
  const carried: (TenantCommitCharges | undefined)[] = [];
  let failed = false;
  const wrap = (store: RuntimeStore): RuntimeStore => ({
    ...store,
    commit: (commit) => {
      carried.push(commit.tenantCharges);
      if (fail && !failed && commit.tenantCharges) {
        failed = true;
        // As a lease lost at the commit: nothing applied, the next holder runs the turn again.
        return Promise.reject(leaseExpired(commit.sessionId, 0));
      }
      return store.commit(commit);
    },
  });
  return { carried, wrap, failed: () => failed };
}

for (const backend of ["memory", "redis"] as const) {
  describe(`tenant charges in the commit on ${backend}`, () => {
    function setup(fail: boolean) {
      const { provider, calls } = twoCallProvider();
      const commits = recordingCommits(fail);
      const h = createRuntimeHarness({
        provider,
        serverTools: toolsOf({ again: () => Promise.resolve({ output: "ok" }) }),
        leaseTtlMs: LEASE_TTL_MS,
        quotas: { config: QUOTAS, recheckMs: 20 },
        budgets: {
          defaultModel: "m1",
          prices: PRICES,
          tenants: new Map([["acme", { maxCostMicros: 1_000_000_000, period: "total" as const }]]),
        },
        wrapStore: commits.wrap,
        ...(backend === "redis" ? { redis, namespace: `charges-${randomUUID()}` } : {}),
      });
      const spend = h.deps.budgets?.store as TenantBudgetStore;
      const counters = async () => ({
        tokens: (await h.quotas.readQuotaUsage("acme")).tokensToday,
        running: (await h.quotas.readQuotaUsage("acme")).runningTurns,
        spent: await spend.chargeTenantSpend({ tenant: "acme", window: "total", costMicros: 0 }),
      });
      return { h, calls, commits, counters };
    }

    test("a two-call turn's tokens and cost add up exactly; its commit carries the last call's and the slot", async () => {
      const { h, calls, commits, counters } = setup(false);
      try {
        const events = await collect(
          h.runtime.streamTurn(textCommand("acme:two", "go"), new AbortController().signal),
        );
        expect(events.at(-1)?.event.type).toBe("turn_completed");
        expect(calls()).toBe(2);
        expect(h.store.chargesInCommit?.({ quotas: h.quotas, spend: h.deps.budgets?.store })).toBe(
          true,
        );
        // The first call's charges went before the second call's checks; the last call's rode in.
        expect(commits.carried.filter((c) => c !== undefined)).toEqual([
          {
            tenant: "acme",
            releaseSlot: expect.stringContaining("acme:two/") as unknown,
            quotaTokens: CALL_TOKENS,
            spend: { window: "total", costMicros: CALL_COST },
          },
        ]);
        await waitFor(async () => (await counters()).running === 0, { what: "the slot's release" });
        expect(await counters()).toEqual({
          tokens: 2 * CALL_TOKENS,
          running: 0,
          spent: 2 * CALL_COST,
        });
        expect((await h.store.loadSession("acme:two" as SessionId))?.costMicros).toBe(
          2 * CALL_COST,
        );
      } finally {
        await h.runtime.drain(1_000);
      }
    });

    test("a commit that fails leaves nothing held: its charges go the separate way and the slot is released", async () => {
      const { h, calls, commits, counters } = setup(true);
      const sweeper = startSweeper({
        driver: h.runtime.driver,
        ready: h.deps.ready,
        logger: silentLogger,
        intervalMs: 20,
      });
      try {
        const abort = new AbortController();
        void collect(h.runtime.streamTurn(textCommand("acme:fail", "go"), abort.signal)).catch(
          () => undefined,
        );
        await waitFor(commits.failed, { what: "the refused commit" });
        // The next holder runs the turn again once the lease lapses; it commits this time.
        await waitFor(
          async () => (await h.store.loadSession("acme:fail" as SessionId))?.turnIndex === 1,
          { what: "the turn run again and committed" },
        );
        await waitFor(async () => (await counters()).running === 0, { what: "the slot's release" });
        // Every call that happened is charged once: the failed run's two and the second run's two.
        expect(calls()).toBe(4);
        expect(await counters()).toEqual({
          tokens: 4 * CALL_TOKENS,
          running: 0,
          spent: 4 * CALL_COST,
        });
        // The session's committed cost is the committed run's alone.
        expect((await h.store.loadSession("acme:fail" as SessionId))?.costMicros).toBe(
          2 * CALL_COST,
        );
        abort.abort();
      } finally {
        sweeper.stop();
        await h.runtime.drain(1_000);
      }
    });

    test("a start its quota admission refuses takes nothing; the input waits and its turn runs once the slot frees", async () => {
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const inner = createScriptedProvider({
        script: () => ({ response: { fullText: "done", parts: [{ type: "text", text: "done" }] } }),
      });
      // The first session's model call waits at the gate, holding the tenant's one slot.
      const gated = {
        name: inner.name,
        capabilities: inner.capabilities,
        call: (request: Parameters<typeof inner.call>[0]) => {
          const held = JSON.stringify(request.messages).includes("hold");
          const call = inner.call(request);
          return (async function* () {
            if (held) await gate;
            let step = await call.next();
            while (step.done !== true) {
              yield step.value;
              step = await call.next();
            }
            return step.value;
          })();
        },
      };
      const admissions: { sessionId: string; kind: string; inStart?: boolean }[] = [];
      const h = createRuntimeHarness({
        provider: gated,
        leaseTtlMs: LEASE_TTL_MS,
        quotas: {
          config: {
            tenants: { solo: { concurrent_turns: { max: 1, mode: "queue" } } },
            default: undefined,
          },
          recheckMs: 20,
        },
        logger: {
          ...silentLogger,
          info: (fields, message) => {
            if (message === "quota admission") admissions.push(fields as (typeof admissions)[0]);
          },
        },
        ...(backend === "redis" ? { redis, namespace: `refused-${randomUUID()}` } : {}),
      });
      const sweeper = startSweeper({
        driver: h.runtime.driver,
        ready: h.deps.ready,
        logger: silentLogger,
        intervalMs: 20,
      });
      try {
        const abort = new AbortController();
        const first = collect(h.runtime.streamTurn(textCommand("solo:a", "hold"), abort.signal));
        await waitFor(() => admissions.some((a) => a.sessionId === "solo:a"), {
          what: "the first turn's admission",
        });
        const second = collect(h.runtime.streamTurn(textCommand("solo:b", "go"), abort.signal));
        await waitFor(
          () => admissions.some((a) => a.sessionId === "solo:b" && a.kind === "refused"),
          { what: "the second start's refusal" },
        );
        // The starts' own steps admitted the first and refused the second.
        expect(admissions.find((a) => a.sessionId === "solo:a")).toMatchObject({
          kind: "admitted",
          inStart: true,
        });
        expect(admissions.find((a) => a.sessionId === "solo:b")).toMatchObject({
          kind: "refused",
          inStart: true,
        });
        // Its input is kept (the driver's own claim then waits as ever, ADR 0015).
        expect((await h.store.listInputs("solo:b" as SessionId)).length).toBe(1);
        open();
        const [a, b] = await Promise.all([first, second]);
        expect(a.at(-1)?.event.type).toBe("turn_completed");
        expect(b.at(-1)?.event.type).toBe("turn_completed");
        expect((await h.store.loadSession("solo:b" as SessionId))?.turnIndex).toBe(1);
        await waitFor(async () => (await h.quotas.readQuotaUsage("solo")).runningTurns === 0, {
          what: "the last slot's release",
        });
      } finally {
        open();
        sweeper.stop();
        await h.runtime.drain(1_000);
      }
    });
  });
}
