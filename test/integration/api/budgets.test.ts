// Spend budgets through the API (ADR 0016), on memory and on Redis: a session budget stops a turn
// with STOP_REASON_BUDGET_EXHAUSTED after a budget_reached event, its usage and cost committed and
// shown by GetSession; the next turn stops before calling the model; a tenant budget spans the
// tenant's sessions; an agent's budget binds its sessions and a turn may only lower it; values
// past the safe integers are refused naming the field.
import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { createAgentService } from "../../../src/api/agent-service.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import type { TenantBudget } from "../../../src/domain/budgets.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import {
  BudgetReached_Limit,
  BudgetReached_Scope,
  StopReason,
  type TurnEvent,
} from "../../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { createRedisStore } from "../../../src/store/redis/index.js";
import { expectCode, violatedFields } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { toolsOf } from "../../unit/engine/helpers.js";

const redisUrl = inject("redisUrl");
const connections: Redis[] = [];
afterAll(() => connections.forEach((c) => c.disconnect()));

// 1 micro per input token, 5 per output token: every model call below costs 100 + 100 = 200.
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

for (const backend of ["memory", "redis"] as const) {
  describe(`spend budgets on ${backend}`, () => {
    let server: ApiServerHarness | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    /** "loop" asks for the `again` tool on every call; any other input is answered at once. */
    async function setup(tenants = new Map<string, TenantBudget>()) {
      let calls = 0;
      const provider = createScriptedProvider({
        script: (request) => {
          calls++;
          const first = request.messages.find((m) => m.role === "user");
          const loop =
            first?.role === "user" &&
            first.content[0]?.type === "text" &&
            first.content[0].text === "loop";
          return loop
            ? {
                response: {
                  usage: CALL_USAGE,
                  parts: [
                    {
                      type: "tool_call",
                      callId: `c${calls}`,
                      toolName: "again",
                      argumentsJson: "{}",
                    },
                  ],
                },
              }
            : {
                response: {
                  usage: CALL_USAGE,
                  fullText: "ok",
                  parts: [{ type: "text", text: "ok" }],
                },
              };
        },
      });
      let redis: Redis | undefined;
      const namespace = `budgets-${randomUUID()}`;
      if (backend === "redis") {
        redis = new Redis(redisUrl);
        connections.push(redis);
      }
      const { runtime, store } = createRuntimeHarness({
        provider,
        serverTools: toolsOf({ again: () => Promise.resolve({ output: "ok" }) }),
        budgets: { defaultModel: "m1", prices: PRICES, tenants },
        ...(redis && { redis, namespace }),
      });
      server = await startApiServer({
        routes: (router) => {
          router.service(TurnService, createTurnService({ runtime }));
          router.service(SessionService, createSessionService({ store }));
          router.service(AgentService, createAgentService(store));
        },
      });
      const turns = createClient(TurnService, server.transport);
      async function turn(request: Parameters<typeof turns.streamTurn>[0]) {
        const events: TurnEvent["event"][] = [];
        for await (const r of turns.streamTurn(request)) if (r.event) events.push(r.event.event);
        const reached = events.find((e) => e?.case === "budgetReached")?.value;
        const completed = events.find((e) => e?.case === "turnCompleted")?.value;
        return { events, reached, completed };
      }
      return {
        turn,
        namespace,
        calls: () => calls,
        sessions: createClient(SessionService, server.transport),
        agents: createClient(AgentService, server.transport),
      };
    }

    const loop = (sessionId: string, budget: Record<string, bigint>) => ({
      sessionId,
      input: [{ kind: { case: "text" as const, value: "loop" } }],
      options: { budget },
    });

    it("a session budget stops the turn, commits its usage and cost, and stops the next one before any call", async () => {
      const { turn, calls, sessions } = await setup();
      const sessionId = `s-${randomUUID()}`;
      const first = await turn(loop(sessionId, { maxCostMicros: 500n }));

      // Calls at 0, 200 and 400 micros go; the fourth, at 600, is refused.
      expect(calls()).toBe(3);
      expect(first.reached).toMatchObject({
        scope: BudgetReached_Scope.SESSION,
        limit: BudgetReached_Limit.COST_MICROS,
        max: 500n,
        spent: 600n,
      });
      expect(first.completed?.outcome?.kind).toMatchObject({
        case: "stopped",
        value: { reason: StopReason.BUDGET_EXHAUSTED },
      });
      expect(first.completed?.usage).toMatchObject({
        inputTokens: 300n,
        outputTokens: 60n,
        costMicros: 600n,
      });
      // budget_reached comes right before turn_completed.
      expect(first.events.slice(-2).map((e) => e?.case)).toEqual([
        "budgetReached",
        "turnCompleted",
      ]);

      const session = (await sessions.getSession({ sessionId })).session;
      expect(session?.usage).toMatchObject({
        inputTokens: 300n,
        outputTokens: 60n,
        costMicros: 600n,
      });
      expect(session?.turnIndex).toBe(1n);
      const listed = (await sessions.listSessions({ pageSize: 10 })).sessions;
      expect(listed.find((s) => s.sessionId === sessionId)?.usage?.costMicros).toBe(600n);

      const second = await turn(loop(sessionId, { maxCostMicros: 500n }));
      expect(calls()).toBe(3);
      expect(second.reached).toMatchObject({
        scope: BudgetReached_Scope.SESSION,
        max: 500n,
        spent: 600n,
      });
      expect(second.completed?.outcome?.kind).toMatchObject({
        case: "stopped",
        value: { reason: StopReason.BUDGET_EXHAUSTED },
      });
      const after = (await sessions.getSession({ sessionId })).session;
      expect(after?.usage).toMatchObject({ inputTokens: 300n, costMicros: 600n });
      expect(after?.turnIndex).toBe(2n);
    });

    if (backend === "redis") {
      it("committed cost survives a restart: a new replica's GetSession reads it", async () => {
        const { turn, namespace } = await setup();
        const sessionId = `r-${randomUUID()}`;
        await turn(loop(sessionId, { maxCostMicros: 300n }));
        const fresh = new Redis(redisUrl);
        connections.push(fresh);
        const restarted = await startApiServer({
          routes: (router) => {
            router.service(
              SessionService,
              createSessionService({ store: createRedisStore({ redis: fresh, namespace }) }),
            );
          },
        });
        try {
          const sessions = createClient(SessionService, restarted.transport);
          const session = (await sessions.getSession({ sessionId })).session;
          // Calls at 0 and 200 go; at 400 the turn stops: 2 calls, 400 micros.
          expect(session?.usage).toMatchObject({ inputTokens: 200n, costMicros: 400n });
        } finally {
          await restarted.close();
        }
      });
    }

    it("a tenant budget counts the spend of all the tenant's sessions", async () => {
      const { turn, calls } = await setup(
        new Map([["default", { maxCostMicros: 300, period: "total" }]]),
      );
      const ask = (sessionId: string) => ({
        sessionId,
        input: [{ kind: { case: "text" as const, value: "hi" } }],
      });
      const [a, b] = [`a-${randomUUID()}`, `b-${randomUUID()}`];
      expect((await turn(ask(a))).completed?.outcome?.kind.case).toBe("finished");
      expect((await turn(ask(b))).completed?.outcome?.kind.case).toBe("finished");
      const third = await turn(ask(a));
      expect(calls()).toBe(2);
      expect(third.reached).toMatchObject({
        scope: BudgetReached_Scope.TENANT,
        limit: BudgetReached_Limit.COST_MICROS,
        max: 300n,
        spent: 400n,
      });
      expect(third.completed?.outcome?.kind).toMatchObject({
        case: "stopped",
        value: { reason: StopReason.BUDGET_EXHAUSTED },
      });
    });

    it("an agent's budget binds its sessions; a turn's own budget may only lower it", async () => {
      const { turn, calls, agents, sessions } = await setup();
      const agentId = `agent-${randomUUID()}`;
      await agents.createAgent({ agentId, definition: { budget: { maxOutputTokens: 30n } } });
      const got = await agents.getAgent({ agentId });
      expect(got.agent?.definition?.budget).toMatchObject({
        maxOutputTokens: 30n,
        maxCostMicros: 0n,
      });

      const higher = `h-${randomUUID()}`;
      await sessions.createSession({ sessionId: higher, agentId });
      // A turn asking for more than the agent allows still stops at the agent's 30: 20 then 40.
      const raised = await turn(loop(higher, { maxOutputTokens: 1000n }));
      expect(calls()).toBe(2);
      expect(raised.reached).toMatchObject({
        scope: BudgetReached_Scope.SESSION,
        limit: BudgetReached_Limit.OUTPUT_TOKENS,
        max: 30n,
        spent: 40n,
      });

      const lower = `l-${randomUUID()}`;
      await sessions.createSession({ sessionId: lower, agentId });
      const lowered = await turn(loop(lower, { maxOutputTokens: 10n }));
      expect(calls()).toBe(3);
      expect(lowered.reached).toMatchObject({ max: 10n, spent: 20n });
    });

    it("the turn's own token_budget keeps working and is announced as the turn's budget", async () => {
      const { turn, calls } = await setup();
      const stopped = await turn({
        sessionId: `t-${randomUUID()}`,
        input: [{ kind: { case: "text" as const, value: "loop" } }],
        options: { tokenBudget: 200n },
      });
      // 120 tokens per call: the second call reaches 240 and its tools do not run.
      expect(calls()).toBe(2);
      expect(stopped.reached).toMatchObject({
        scope: BudgetReached_Scope.TURN,
        limit: BudgetReached_Limit.TOKENS,
        max: 200n,
        spent: 240n,
      });
      expect(stopped.completed?.outcome?.kind).toMatchObject({
        case: "stopped",
        value: { reason: StopReason.BUDGET_EXHAUSTED, message: "used 240 of 200 tokens" },
      });
      expect(stopped.completed?.usage).toMatchObject({ inputTokens: 200n, costMicros: 400n });
    });

    it("a budget past the safe integers is refused naming the field", async () => {
      const { turn, agents } = await setup();
      const huge = 2n ** 53n;
      const error = await expectCode(
        turn(loop(`x-${randomUUID()}`, { maxCostMicros: huge })),
        Code.InvalidArgument,
      );
      expect(violatedFields(error)).toEqual(["options.budget.max_cost_micros"]);
      const agentError = await expectCode(
        agents.createAgent({
          agentId: `a-${randomUUID()}`,
          definition: { budget: { maxInputTokens: huge } },
        }),
        Code.InvalidArgument,
      );
      expect(violatedFields(agentError)).toEqual(["definition.budget.max_input_tokens"]);
    });
  });
}
