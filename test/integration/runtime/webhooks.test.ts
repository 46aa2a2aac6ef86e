// Webhooks with real parts (ADR 0021): turns run by the runtime write their events in the commit
// and park steps; a leased deliverer sends them over HTTP, signed, to a receiver that verifies
// every signature with the Standard Webhooks algorithm. Memory, Redis and Redis Cluster.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { WebhookEndpoint } from "../../../src/domain/webhooks.js";
import { systemClock } from "../../../src/ports/clock.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import {
  createOutboxHints,
  createWebhookDeliverer,
  replayDelivery,
  silentLogger,
  type StreamTurnCommand,
  type WebhookDeliverer,
} from "../../../src/runtime/index.js";
import { createWebhookSender } from "../../../src/webhooks/webhook-sender.js";
import {
  collect,
  createRuntimeHarness,
  textCommand,
  type RuntimeHarness,
} from "../../support/runtime-harness.js";
import { connectBothForFile } from "../../support/redis-store-factory.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.js";
import { waitFor } from "../../support/wait-for.js";

const { redis, cluster } = connectBothForFile();

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const TENANT = "acme";

/** "use <tool>" asks for that tool once; anything else (or after a tool result) is an answer. */
function provider(): ModelProvider {
  return createScriptedProvider({
    script: (request) => {
      const last = request.messages.at(-1);
      const said =
        last?.role === "user" ? last.content.map((c) => (c.type === "text" ? c.text : "")) : [];
      const tool = /use (\w+)/u.exec(said.join(" "))?.[1];
      if (!tool) return { events: [{ type: "text_delta", text: "done" }], response: {} };
      const call = {
        type: "tool_call" as const,
        callId: `${tool}-1`,
        toolName: tool,
        argumentsJson: "{}",
      };
      // A tool request is priced: 50 tokens, past a token budget of 10 (the budget test).
      return {
        response: {
          parts: [call],
          usage: {
            inputTokens: 40,
            outputTokens: 10,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            reasoningTokens: 0,
          },
        },
      };
    },
  });
}

interface Setup {
  committedAt: Map<string, number>;
  harness: RuntimeHarness;
  hooks: WebhookStore;
  receiver: WebhookReceiver;
  deliverer(extra?: { allowPrivate?: boolean; backoffMs?: number }): WebhookDeliverer;
  endpoint(extra?: Partial<WebhookEndpoint>): Promise<void>;
  runTurn(
    text: string,
    extra?: Partial<StreamTurnCommand>,
  ): Promise<{ sessionId: string; turnId: string }>;
}

for (const backend of ["memory", "redis", "cluster"] as const) {
  describe(`webhooks on ${backend}`, () => {
    const closers: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });

    async function setup(): Promise<Setup> {
      const committedAt = new Map<string, number>();
      const harness = createRuntimeHarness({
        provider: provider(),
        serverTools: {
          definitions: () => [
            { name: "deploy", description: "d", inputSchema: { type: "object" } },
          ],
          execute: () => Promise.resolve({ output: "ok" }),
        },
        approvalRequiredTools: ["deploy"],
        parkAfterMs: 0,
        webhooks: true,
        // When each event's commit was acknowledged, for the latency figure.
        wrapStore: (store) => ({
          ...store,
          commit: async (commit) => {
            const receipt = await store.commit(commit);
            for (const event of commit.webhookEvents ?? []) {
              committedAt.set(event.id, performance.now());
            }
            return receipt;
          },
        }),
        ...(backend === "redis" && { redis }),
        ...(backend === "cluster" && { redis: cluster }),
      });
      const hooks = harness.webhooks;
      const receiver = await startWebhookReceiver(SECRET);
      closers.push(
        () => receiver.close(),
        () => harness.runtime.drain(1_000).then(() => undefined),
      );
      const deliverers: WebhookDeliverer[] = [];
      // Production wiring: the runtime's outbox hint also nudges this replica's deliverers, and
      // where the store folds the outbox a commit claims its rows for the first of them.
      harness.deps.webhooks = createOutboxHints(
        hooks,
        systemClock,
        60_000,
        (id) => {
          for (const d of deliverers) d.nudge(id);
          return deliverers.length > 0;
        },
        {
          claimTicket: () => deliverers[0]?.claimTicket(),
          deliverClaimed: (id, claimed, seenAtMs) =>
            deliverers[0]?.deliverClaimed(id, claimed, seenAtMs),
        },
      );
      return {
        committedAt,
        harness,
        hooks,
        receiver,
        deliverer(extra = {}) {
          const d = createWebhookDeliverer({
            store: hooks,
            send: createWebhookSender({
              allowPrivate: extra.allowPrivate ?? true,
              timeoutMs: 5_000,
            }),
            clock: systemClock,
            logger: silentLogger,
            pollMs: 20,
            backoffMs: () => extra.backoffMs ?? 5,
          });
          deliverers.push(d);
          d.start();
          closers.push(() => d.stop());
          return d;
        },
        async endpoint(extra = {}) {
          await hooks.createEndpoint({
            tenant: TENANT,
            endpointId: "ep-1",
            url: receiver.url,
            eventTypes: [],
            secret: SECRET,
            createdAtMs: Date.now(),
            ...extra,
          });
        },
        async runTurn(text, extra = {}) {
          const client = `s-${randomUUID()}`;
          const events = await collect(
            harness.runtime.streamTurn(
              { ...textCommand(`${TENANT}:${client}`, text, extra), publicSessionId: client },
              new AbortController().signal,
            ),
          );
          return { sessionId: client, turnId: events[0]?.turnId ?? "" };
        },
      };
    }

    it("a turn's completion is delivered once, signed, with the thin payload", async () => {
      const s = await setup();
      await s.endpoint();
      s.deliverer();
      const { sessionId, turnId } = await s.runTurn("hello");
      await waitFor(() => s.receiver.delivered.length === 1, { what: "the turn's delivery" });
      const got = s.receiver.delivered[0];
      expect(got?.body).toEqual({
        id: got?.id,
        type: "turn.completed",
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/u) as string,
        data: {
          session_id: sessionId,
          turn_id: turnId,
          outcome: "finished",
          reason: "assistant_message",
        },
      });
      expect(got?.id).toMatch(/^msg_/u);
      expect(s.receiver.rejected).toBe(0);
    });

    it("a replica lost between its commit and the hint's note still has its event delivered", async () => {
      const s = await setup();
      await s.endpoint();
      // The committing replica expects its row a short lease ahead, commits, and is lost before
      // its note (written never reaches the index); another replica's deliverer only polls.
      const expectOnly = createOutboxHints(s.hooks, systemClock, 300);
      s.harness.deps.webhooks = { expect: expectOnly.expect, written: () => Promise.resolve() };
      const { sessionId, turnId } = await s.runTurn("hello");
      expect(s.receiver.delivered).toHaveLength(0);
      s.deliverer();
      await waitFor(() => s.receiver.delivered.length === 1, {
        what: "the delivery after the deliverer starts",
      });
      expect(s.receiver.delivered[0]?.body.data).toMatchObject({
        session_id: sessionId,
        turn_id: turnId,
      });
    });

    it("a replica lost after its commit claimed its rows still has its event delivered a lease later", async () => {
      const s = await setup();
      await s.endpoint();
      // The commit folds its claim for a deliverer of this replica, which is lost before it
      // delivers (where the store cannot fold, it is lost before its note); the hint and the
      // claim's lease are short, and another replica's deliverer only polls.
      const lost = { claimToken: "lost-replica", leaseMs: 300, max: 16 };
      s.harness.deps.webhooks = createOutboxHints(s.hooks, systemClock, 300, () => true, {
        claimTicket: () => lost,
        deliverClaimed: () => undefined,
      });
      // The lost claim (or the hint) is taken after this instant and holds for 300 ms from then.
      const beforeTurn = performance.now();
      const { sessionId, turnId } = await s.runTurn("hello");
      s.deliverer();
      await waitFor(() => s.receiver.delivered.length === 1, {
        what: "the delivery a lease later",
      });
      // Not delivered while the lost replica's claim held it (a millisecond of clock rounding).
      expect(s.receiver.delivered[0]?.atMs).toBeGreaterThanOrEqual(beforeTurn + 300 - 1);
      expect(s.receiver.delivered[0]?.body.data).toMatchObject({
        session_id: sessionId,
        turn_id: turnId,
      });
    });

    it("a turn a budget stopped sends its end and session.budget_reached naming the budget", async () => {
      const s = await setup();
      await s.endpoint();
      s.deliverer();
      const { sessionId, turnId } = await s.runTurn("use lookup", {
        settings: { maxTurnTokens: 10 },
      });
      await waitFor(() => s.receiver.delivered.length === 2, { what: "the turn's two deliveries" });
      const byType = new Map(s.receiver.delivered.map((d) => [d.body.type, d.body]));
      expect(byType.get("turn.completed")?.data).toEqual({
        session_id: sessionId,
        turn_id: turnId,
        outcome: "stopped",
        reason: "budget_exhausted",
      });
      expect(byType.get("session.budget_reached")?.data).toEqual({
        session_id: sessionId,
        turn_id: turnId,
        scope: "turn",
        limit: "tokens",
        max: "10",
        spent: "50",
      });
      expect(s.receiver.rejected).toBe(0);
    });

    it("a parked turn waiting for an approval sends session.action_required with the call ids", async () => {
      const s = await setup();
      await s.endpoint({ eventTypes: ["session.action_required"] });
      s.deliverer();
      const client = `s-${randomUUID()}`;
      const controller = new AbortController();
      const stream = collect(
        s.harness.runtime.streamTurn(
          { ...textCommand(`${TENANT}:${client}`, "use deploy"), publicSessionId: client },
          controller.signal,
        ),
      ).catch(() => []);
      await waitFor(() => s.receiver.delivered.length === 1, {
        what: "the session.action_required delivery",
      });
      expect(s.receiver.delivered[0]?.body).toMatchObject({
        type: "session.action_required",
        data: {
          session_id: client,
          call_ids: ["deploy-1"],
          approval_call_ids: ["deploy-1"],
          result_call_ids: [],
        },
      });
      controller.abort();
      await stream;
    });

    it("a receiver failing 3 times gets the same id on every retry, then the delivery", async () => {
      const s = await setup();
      await s.endpoint();
      s.receiver.failNext(3);
      s.deliverer();
      await s.runTurn("hello");
      await waitFor(() => s.receiver.delivered.length === 1, {
        what: "the delivery after its retries",
      });
      const ids = s.receiver.requests.map((r) => r.id);
      expect(ids).toHaveLength(4);
      expect(new Set(ids).size).toBe(1);
      expect(s.receiver.requests.map((r) => r.status)).toEqual([500, 500, 500, 204]);
      // The deliverer logs an attempt after its response arrived: wait for the fourth record.
      const log = await waitFor(
        async () => {
          const page = await s.hooks.listDeliveries(TENANT, "ep-1", { limit: 10 });
          return page.deliveries.length === 4 ? page : undefined;
        },
        { what: "the fourth attempt's record" },
      );
      expect(log.deliveries.map((d) => [d.attempt, d.ok, d.status])).toEqual([
        [4, true, 204],
        [3, false, 500],
        [2, false, 500],
        [1, false, 500],
      ]);
    });

    it("20 consecutive failures disable the endpoint, and nothing more is sent to it", async () => {
      const s = await setup();
      await s.endpoint();
      s.receiver.answerAlways(503);
      s.deliverer({ backoffMs: 1 });
      await s.runTurn("hello");
      await waitFor(async () => (await s.hooks.getEndpoint(TENANT, "ep-1"))?.disabled === true, {
        what: "the endpoint to be disabled",
      });
      expect(await s.hooks.getEndpoint(TENANT, "ep-1")).toMatchObject({
        disabled: true,
        disabledReason: "20 consecutive failed deliveries",
      });
      await s.runTurn("again");
      // The second turn's event finds no enabled endpoint: settled without a request.
      await waitFor(async () => (await s.hooks.dueOutboxes(100)).length === 0, {
        what: "the outbox to be settled",
      });
      expect(s.receiver.requests).toHaveLength(20);
    });

    it("a redirect is not followed: it counts as a failed attempt", async () => {
      const s = await setup();
      await s.endpoint();
      s.receiver.answerAlways(302);
      s.deliverer({ backoffMs: 60_000 });
      await s.runTurn("hello");
      await waitFor(
        async () =>
          (await s.hooks.listDeliveries(TENANT, "ep-1", { limit: 1 })).deliveries.length === 1,
        { what: "the delivery's record" },
      );
      const [first] = (await s.hooks.listDeliveries(TENANT, "ep-1", { limit: 1 })).deliveries;
      expect(first).toMatchObject({ ok: false, status: 302, error: "redirect 302 not followed" });
    });

    it("a loopback endpoint is refused without TETHER_WEBHOOK_ALLOW_PRIVATE", async () => {
      const s = await setup();
      await s.endpoint();
      s.deliverer({ allowPrivate: false, backoffMs: 60_000 });
      await s.runTurn("hello");
      await waitFor(
        async () =>
          (await s.hooks.listDeliveries(TENANT, "ep-1", { limit: 1 })).deliveries.length === 1,
        { what: "the delivery's record" },
      );
      const [first] = (await s.hooks.listDeliveries(TENANT, "ep-1", { limit: 1 })).deliveries;
      expect(first).toMatchObject({
        ok: false,
        status: 0,
        error: "refused: the host is not a reachable public address",
      });
      expect(s.receiver.requests).toHaveLength(0);
    });

    it("a replayed delivery is sent again with the same id", async () => {
      const s = await setup();
      await s.endpoint();
      s.deliverer();
      await s.runTurn("hello");
      await waitFor(() => s.receiver.delivered.length === 1, { what: "the turn's delivery" });
      // The attempt is logged, and its row settled, just after the response arrived.
      const logged = await waitFor(
        async () => (await s.hooks.listDeliveries(TENANT, "ep-1", { limit: 1 })).deliveries[0],
        { what: "the attempt's record" },
      );
      expect(
        await waitFor(() => replayDelivery(s.hooks, TENANT, "ep-1", logged.deliveryId), {
          what: "the replay to be queued",
        }),
      ).toBe(true);
      await waitFor(() => s.receiver.delivered.length === 2, { what: "the replayed delivery" });
      expect(s.receiver.delivered[1]?.id).toBe(s.receiver.delivered[0]?.id);
      expect(await replayDelivery(s.hooks, TENANT, "ep-1", "no-such-delivery")).toBe(false);
    });

    it("two deliverers deliver every event at least once; latency after the commit is measured", async () => {
      const s = await setup();
      await s.endpoint();
      s.deliverer();
      s.deliverer();
      const turns = 100;
      for (let i = 0; i < turns; i++) {
        const { turnId } = await s.runTurn(`turn ${i}`);
        // One turn at a time, so each latency is the delivery's own, not a queue behind others.
        await waitFor(() => s.receiver.delivered.some((d) => d.body.data.turn_id === turnId), {
          what: "the turn's delivery",
        });
      }
      await waitFor(() => new Set(s.receiver.delivered.map((d) => d.id)).size === turns, {
        what: "every turn's delivery",
        timeoutMs: 20_000,
      });
      const ids = s.receiver.delivered.map((d) => d.id);
      const duplicates = ids.length - new Set(ids).size;
      const latencies = s.receiver.delivered
        .map((d) => d.atMs - (s.committedAt.get(d.id) ?? Number.NaN))
        .sort((a, b) => a - b);
      const at = (q: number) =>
        latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
      // A figure for the ADR, not an assertion: tests never assert speed.
      console.log(
        JSON.stringify({
          backend,
          turns,
          duplicates,
          p50Ms: at(0.5).toFixed(1),
          p99Ms: at(0.99).toFixed(1),
        }),
      );
      expect(new Set(ids).size).toBe(turns);
    });
  });
}
