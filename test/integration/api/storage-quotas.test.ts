// Per-tenant storage limits through the API (ADR 0029), on memory and on Redis, with the
// composition main.ts makes: a create past a limit is RESOURCE_EXHAUSTED with a QuotaFailure
// naming the limit, a delete frees a slot, and GetQuotaUsage shows each limit with its use.
import { Code, createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { QuotaFailureSchema } from "../../../src/gen/google/rpc/error_details_pb.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import {
  QuotaLimitKind,
  QuotaMode,
  QuotaService,
} from "../../../src/gen/tether/v1/quota_service_pb.js";
import { ScheduleService } from "../../../src/gen/tether/v1/schedule_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { WebhookService } from "../../../src/gen/tether/v1/webhook_service_pb.js";
import { expectCode } from "../../support/api-clients.js";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";

const QUOTAS = {
  tenants: {
    acme: {
      sessions: 2,
      agents: 1,
      schedules: 1,
      webhook_endpoints: 1,
      session_metadata_bytes: 100,
      metadata_history_bytes: 1_000,
    },
  },
};

async function quotaFailure(call: Promise<unknown>) {
  const error = await expectCode(call, Code.ResourceExhausted);
  const violation = error.findDetails(QuotaFailureSchema)[0]?.violations[0];
  return {
    quotaId: violation?.quotaId,
    quotaValue: violation?.quotaValue,
    subject: violation?.subject,
  };
}

const BACKENDS = [
  { name: "memory", env: (): Record<string, string> => ({}) },
  {
    name: "redis",
    env: (): Record<string, string> => ({
      TETHER_STORE: "redis",
      TETHER_REDIS_URL: inject("redisUrl"),
    }),
  },
] as const;

for (const backend of BACKENDS) {
  describe(`tenant storage limits through the API (${backend.name})`, () => {
    let tether: WiredServer;
    const run = Date.now().toString(36);
    beforeAll(async () => {
      tether = await startWiredServer({
        ...backend.env(),
        // A fresh tenant per run: a shared Redis keeps earlier runs' slots.
        TETHER_API_KEYS: `key-acme-0123456789=acme,key-other-0123456789=other${run}`,
        TETHER_QUOTAS: JSON.stringify(QUOTAS),
      });
    });
    afterAll(async () => {
      await tether.close();
    });
    const acme = <S extends Parameters<typeof createClient>[0]>(service: S) =>
      createClient(service, tether.as("key-acme-0123456789"));

    test("sessions: the third is RESOURCE_EXHAUSTED with QuotaFailure (CreateSession and a turn's implicit creation alike); a delete frees one", async () => {
      const sessions = acme(SessionService);
      const prefix = `s-${run}`;
      await sessions.createSession({ sessionId: `${prefix}-1` });
      await sessions.createSession({ sessionId: `${prefix}-2` });
      expect(await quotaFailure(sessions.createSession({ sessionId: `${prefix}-3` }))).toEqual({
        quotaId: "sessions",
        quotaValue: 2n,
        subject: "acme",
      });
      const turn = acme(TurnService).streamTurn({
        sessionId: `${prefix}-4`,
        input: [{ kind: { case: "text", value: "hi" } }],
      });
      expect(
        (
          await quotaFailure(
            (async () => {
              for await (const _ of turn) void _;
            })(),
          )
        ).quotaId,
      ).toBe("sessions");
      await expectCode(sessions.getSession({ sessionId: `${prefix}-3` }), Code.NotFound);
      await expectCode(sessions.getSession({ sessionId: `${prefix}-4` }), Code.NotFound);
      // An existing session still takes turns.
      for await (const _ of acme(TurnService).streamTurn({
        sessionId: `${prefix}-1`,
        input: [{ kind: { case: "text", value: "hi" } }],
      }))
        void _;
      const usage = await acme(QuotaService).getQuotaUsage({});
      expect(usage.limits.find((l) => l.kind === QuotaLimitKind.SESSIONS)).toMatchObject({
        mode: QuotaMode.REJECT,
        limit: 2n,
        used: 2n,
      });
      await sessions.deleteSession({ sessionId: `${prefix}-2` });
      await sessions.createSession({ sessionId: `${prefix}-3` });
      await sessions.deleteSession({ sessionId: `${prefix}-1` });
      await sessions.deleteSession({ sessionId: `${prefix}-3` });
    });

    test("metadata: an update past session_metadata_bytes is RESOURCE_EXHAUSTED and changes nothing", async () => {
      const sessions = acme(SessionService);
      const id = `m-${run}`;
      await sessions.createSession({ sessionId: id, metadata: { a: "x".repeat(50) } });
      expect(
        (
          await quotaFailure(
            sessions.updateSessionMetadata({ sessionId: id, metadata: { b: "y".repeat(60) } }),
          )
        ).quotaId,
      ).toBe("session_metadata_bytes");
      const got = await sessions.getSession({ sessionId: id });
      expect(got.session?.metadata).toEqual({ a: "x".repeat(50) });
      await sessions.deleteSession({ sessionId: id });
    });

    test("webhook endpoints, agents and schedules: one each, the next refused; GetQuotaUsage reports every storage limit", async () => {
      const hooks = acme(WebhookService);
      await hooks.createWebhookEndpoint({
        endpointId: `e1-${run}`,
        url: "https://hooks.example.com/a",
      });
      expect(
        (
          await quotaFailure(
            hooks.createWebhookEndpoint({
              endpointId: `e2-${run}`,
              url: "https://hooks.example.com/b",
            }),
          )
        ).quotaId,
      ).toBe("webhook_endpoints");
      const agents = acme(AgentService);
      const definition = { model: "echo", systemPrompt: "be brief" };
      await agents.createAgent({ agentId: `a1-${run}`, definition });
      expect(
        (await quotaFailure(agents.createAgent({ agentId: `a2-${run}`, definition }))).quotaId,
      ).toBe("agents");
      const schedules = acme(ScheduleService);
      const target = { case: "agent" as const, value: { agentId: `a1-${run}` } };
      const input = [{ kind: { case: "text" as const, value: "tick" } }];
      await schedules.createSchedule({
        scheduleId: `c1-${run}`,
        target,
        cron: "0 0 1 1 *",
        timezone: "UTC",
        input,
      });
      expect(
        (
          await quotaFailure(
            schedules.createSchedule({
              scheduleId: `c2-${run}`,
              target,
              cron: "0 0 1 1 *",
              timezone: "UTC",
              input,
            }),
          )
        ).quotaId,
      ).toBe("schedules");
      const usage = await acme(QuotaService).getQuotaUsage({});
      const of = (kind: QuotaLimitKind) => {
        const l = usage.limits.find((x) => x.kind === kind);
        return l && [l.limit, l.used];
      };
      expect(of(QuotaLimitKind.WEBHOOK_ENDPOINTS)).toEqual([1n, 1n]);
      expect(of(QuotaLimitKind.AGENTS)).toEqual([1n, 1n]);
      expect(of(QuotaLimitKind.SCHEDULES)).toEqual([1n, 1n]);
      expect(of(QuotaLimitKind.SESSION_METADATA_BYTES)).toEqual([100n, 0n]);
      expect(of(QuotaLimitKind.METADATA_HISTORY_BYTES)).toEqual([1_000n, 0n]);
      await schedules.deleteSchedule({ scheduleId: `c1-${run}` });
      await agents.deleteAgent({ agentId: `a1-${run}` });
      await hooks.deleteWebhookEndpoint({ endpointId: `e1-${run}` });
      await hooks.createWebhookEndpoint({
        endpointId: `e2-${run}`,
        url: "https://hooks.example.com/b",
      });
      await hooks.deleteWebhookEndpoint({ endpointId: `e2-${run}` });
    });

    test("a tenant with no TETHER_QUOTAS entry gets the defaults in GetQuotaUsage", async () => {
      const usage = await createClient(
        QuotaService,
        tether.as("key-other-0123456789"),
      ).getQuotaUsage({});
      const limits = new Map(usage.limits.map((l) => [l.kind, l.limit]));
      expect(limits.get(QuotaLimitKind.SESSIONS)).toBe(10_000n);
      expect(limits.get(QuotaLimitKind.AGENTS)).toBe(1_000n);
      expect(limits.get(QuotaLimitKind.SCHEDULES)).toBe(1_000n);
      expect(limits.get(QuotaLimitKind.WEBHOOK_ENDPOINTS)).toBe(20n);
      expect(limits.get(QuotaLimitKind.SESSION_METADATA_BYTES)).toBe(1_048_576n);
      expect(limits.get(QuotaLimitKind.METADATA_HISTORY_BYTES)).toBe(8_388_608n);
    });
  });
}
