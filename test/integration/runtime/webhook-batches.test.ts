// Webhook batches with real parts (ADR 0021 "Batches"): a deliverer caches each tenant's
// endpoints behind the tenant's endpoints version, checked with every claim. A secret rotated
// through the store (another replica's API) is used from the next claim on, and a deleted
// endpoint is owed nothing even though the cache held it. Memory, Redis and Redis Cluster.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { OutboxId } from "../../../src/domain/ids.js";
import type { WebhookEvent } from "../../../src/domain/webhooks.js";
import { systemClock } from "../../../src/ports/clock.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import {
  createOutboxHints,
  createWebhookDeliverer,
  silentLogger,
} from "../../../src/runtime/index.js";
import { createWebhookSender } from "../../../src/webhooks/webhook-sender.js";
import { collect, createRuntimeHarness, textCommand } from "../../support/runtime-harness.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import { connectBothForFile } from "../../support/redis-store-factory.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.js";
import { waitFor } from "../../support/wait-for.js";

const { redis, cluster } = connectBothForFile();

const OLD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NEW_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const TENANT = "acme";

const event = (id: string): WebhookEvent => ({
  id,
  type: "turn.completed",
  createdAtMs: Date.now(),
  data: { session_id: "s", turn_id: "t1" },
});

for (const backend of ["memory", "redis", "cluster"] as const) {
  describe(`webhook batches on ${backend}`, () => {
    const closers: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });

    async function setup(secret: string, tuning: { failureLimit?: number } = {}) {
      const harness = createRuntimeHarness({
        provider: createScriptedProvider({ script: () => ({ events: [], response: {} }) }),
        webhooks: true,
        ...(backend === "redis" && { redis }),
        ...(backend === "cluster" && { redis: cluster }),
      });
      // The deliverer's own store calls, counted (the commit's are not among them).
      const calls = new Map<string, number>();
      const hooks = counted(harness.webhooks, calls);
      const receiver: WebhookReceiver = await startWebhookReceiver(secret);
      const disabled: string[] = [];
      const deliverer = createWebhookDeliverer({
        ...tuning,
        onDisabled: (_tenant, endpointId) => disabled.push(endpointId),
        store: hooks,
        send: createWebhookSender({ allowPrivate: true, timeoutMs: 5_000 }),
        clock: systemClock,
        logger: silentLogger,
        pollMs: 20,
        backoffMs: () => 5,
      });
      deliverer.start();
      closers.push(
        () => receiver.close(),
        () => deliverer.stop(),
      );
      const endpoint = (endpointId: string, withSecret: string) =>
        hooks.createEndpoint({
          tenant: TENANT,
          endpointId,
          url: receiver.url,
          eventTypes: [],
          secret: withSecret,
          createdAtMs: Date.now(),
        });
      // A fresh outbox per call; the nudge is what a commit of this replica gives.
      const send = async (id: string, targets?: string[]) => {
        const outboxId = `${TENANT}:s-${randomUUID()}` as OutboxId;
        await hooks.enqueueWebhookEvent(outboxId, event(id), targets);
        deliverer.nudge(outboxId);
      };
      const got = (id: string) => receiver.delivered.some((d) => d.id === id);
      // Production wiring: the runtime's hint nudges this deliverer and folds its claim.
      harness.deps.webhooks = createOutboxHints(
        hooks,
        systemClock,
        60_000,
        (id) => deliverer.nudge(id),
        deliverer,
      );
      const runTurn = async () => {
        const client = `s-${randomUUID()}`;
        const sessionId = `${TENANT}:${client}`;
        const command = { ...textCommand(sessionId, "hi"), publicSessionId: client };
        const events = await collect(
          harness.runtime.streamTurn(command, new AbortController().signal),
        );
        return events[0]?.turnId ?? "";
      };
      const idOf = (turnId: string) =>
        receiver.delivered.find((d) => d.body.data.turn_id === turnId)?.id;
      const deliveredTurn = (turnId: string) => idOf(turnId) !== undefined;
      const requestsOf = (turnId: string) => receiver.requests.filter((r) => r.id === idOf(turnId));
      /** Until the deliverer has settled `batches` batches (each after all of its sends). */
      const settled = (batches: number) =>
        waitFor(() => (calls.get("settleOutboxBatch") ?? 0) >= batches, {
          what: `${batches} settled batches`,
        });
      return {
        hooks,
        receiver,
        deliverer,
        endpoint,
        send,
        got,
        calls,
        runTurn,
        deliveredTurn,
        requestsOf,
        settled,
        disabled,
        folds: harness.store.foldsOutbox === true,
      };
    }

    it("a turn's commit takes its hint and its rows' claim in its step where the store folds them", async () => {
      const s = await setup(NEW_SECRET);
      await s.endpoint("ep-1", NEW_SECRET);
      const warm = await s.runTurn();
      await waitFor(() => s.deliveredTurn(warm), { what: "the warming delivery" });
      // Settled after the receiver answered: wait for it before counting afresh.
      await waitFor(() => (s.calls.get("settleOutboxBatch") ?? 0) === 1, { what: "its settle" });
      s.calls.clear();
      for (let i = 0; i < 3; i++) {
        const turnId = await s.runTurn();
        await waitFor(() => s.deliveredTurn(turnId), { what: "the turn's delivery" });
      }
      const n = (name: string) => s.calls.get(name) ?? 0;
      await waitFor(() => n("settleOutboxBatch") >= 3, { what: "the three settles" });
      if (s.folds) {
        // No expect, claim or note of its own; the endpoints unchanged: served from the cache.
        const separate = ["expectOutbox", "claimOutbox", "noteOutbox", "endpointsSince"];
        expect(separate.map(n)).toEqual([0, 0, 0, 0]);
      } else {
        // Cluster: the hint's slot and the tenant's are not the session's; separate steps.
        expect(n("expectOutbox")).toBe(3);
        expect(n("claimOutbox")).toBeGreaterThanOrEqual(3);
        expect(n("endpointsSince")).toBeGreaterThanOrEqual(3);
      }
      expect(n("settleOutboxBatch")).toBe(3);
    });

    it("a delivered turn's attempt is recorded in its settle, with no recordDelivery step, where the store folds them", async () => {
      const s = await setup(NEW_SECRET);
      await s.endpoint("ep-1", NEW_SECRET);
      const n = (name: string) => s.calls.get(name) ?? 0;
      const turns: string[] = [];
      for (let i = 0; i < 3; i++) {
        const turnId = await s.runTurn();
        await waitFor(() => s.deliveredTurn(turnId), { what: "the turn's delivery" });
        turns.push(turnId);
      }
      await waitFor(() => n("settleOutboxBatch") >= 3, { what: "the three settles" });
      expect(s.hooks.foldsDeliveries === true).toBe(backend !== "cluster");
      // Cluster: the tenant's log is in another slot than the outbox; one step per attempt.
      expect(n("recordDelivery")).toBe(s.hooks.foldsDeliveries ? 0 : 3);
      const log = await s.hooks.listDeliveries(TENANT, "ep-1", { limit: 10 });
      expect(log.deliveries.map((d) => [d.event.data.turn_id, d.ok, d.status])).toEqual(
        turns.reverse().map((t) => [t, true, 204]),
      );
    });

    it("an endpoint disabled by failures within a batch is owed nothing more, and reported once", async () => {
      const s = await setup(NEW_SECRET, { failureLimit: 2 });
      await s.endpoint("ep-1", NEW_SECRET);
      s.receiver.answerAlways(500);
      // Three rows in one outbox: one claim, three failed attempts, the second disables ep-1.
      const outboxId = `${TENANT}:s-${randomUUID()}` as OutboxId;
      for (const id of ["msg_f1", "msg_f2", "msg_f3"]) {
        await s.hooks.enqueueWebhookEvent(outboxId, event(id));
      }
      s.deliverer.nudge(outboxId);
      await s.settled(1);
      const after = await s.hooks.getEndpoint(TENANT, "ep-1");
      expect([after?.disabled, after?.consecutiveFailures]).toEqual([true, 3]);
      // Folded: retried for nobody, every row is done by the batch's own settle. One by one
      // (Cluster), the attempt recorded before the disable left its row owed: its retry drops it.
      const rowsLeft = async () => (await s.hooks.claimOutbox(outboxId, "probe", 1, 10)).remaining;
      if (s.hooks.foldsDeliveries) expect(await rowsLeft()).toBe(0);
      else await waitFor(async () => (await rowsLeft()) === 0, { what: "the retry's settle" });
      const log = await s.hooks.listDeliveries(TENANT, "ep-1", { limit: 10 });
      expect(log.deliveries.map((d) => d.ok)).toEqual([false, false, false]);
      // Folded, the settle reports the one disable; one by one, each attempt after it saw it.
      if (s.hooks.foldsDeliveries) expect(s.disabled).toEqual(["ep-1"]);
      else expect(s.disabled.length).toBeGreaterThanOrEqual(1);
    });

    it("a deleted or rotated endpoint is seen by the next turn's commit, though the cache held it", async () => {
      const s = await setup(NEW_SECRET);
      await s.endpoint("ep-1", NEW_SECRET);
      await s.endpoint("ep-2", NEW_SECRET);
      const warm = await s.runTurn();
      await waitFor(() => s.requestsOf(warm).length === 2, { what: "the warming deliveries" });
      expect(await s.hooks.deleteEndpoint(TENANT, "ep-1")).toBe(true);
      const afterDelete = await s.runTurn();
      await waitFor(() => s.deliveredTurn(afterDelete), { what: "the live endpoint's delivery" });
      // Each turn's outbox is settled once, after every send of its batch: the second settle
      // means no send of the deleted endpoint's can still land.
      await s.settled(2);
      expect(s.requestsOf(afterDelete)).toHaveLength(1);
      expect(s.receiver.rejected).toBe(0);
      // Rotated to a secret the receiver does not know: the next send is signed with it.
      await s.hooks.updateEndpoint({ tenant: TENANT, endpointId: "ep-2", secret: OLD_SECRET });
      await s.runTurn();
      await waitFor(() => s.receiver.rejected > 0, { what: "the rotated secret's attempt" });
    });

    it("a secret rotated through the store is used from the next claim on", async () => {
      const s = await setup(NEW_SECRET);
      await s.endpoint("ep-1", OLD_SECRET);
      // The first event is signed with the old secret (the receiver knows only the new one):
      // the deliverer has cached the endpoint with it.
      await s.send("msg_before");
      await waitFor(() => s.receiver.rejected > 0, { what: "the old secret's attempt" });
      await s.hooks.updateEndpoint({ tenant: TENANT, endpointId: "ep-1", secret: NEW_SECRET });
      await s.send("msg_after");
      await waitFor(() => s.got("msg_after"), { what: "the new secret's delivery" });
      expect(s.receiver.requests.find((r) => r.id === "msg_after")?.verified).toBe(true);
    });

    it("stop waits for the deliveries of a batch it claimed, settled", async () => {
      const s = await setup(OLD_SECRET);
      await s.endpoint("ep-1", OLD_SECRET);
      const outboxId = `${TENANT}:s-${randomUUID()}` as OutboxId;
      await s.hooks.enqueueWebhookEvent(outboxId, event("msg_stop"));
      s.deliverer.nudge(outboxId);
      await s.deliverer.stop();
      expect(s.got("msg_stop")).toBe(true);
      expect(await s.hooks.claimOutbox(outboxId, "probe", 60_000, 10)).toEqual({
        claims: [],
        remaining: 0,
      });
    });

    it("a deleted endpoint's rows are not delivered, though the cache held it", async () => {
      const s = await setup(OLD_SECRET);
      await s.endpoint("ep-1", OLD_SECRET);
      await s.endpoint("ep-2", OLD_SECRET);
      await s.send("msg_warm");
      await waitFor(() => s.receiver.delivered.length === 2, { what: "the warming deliveries" });
      expect(await s.hooks.deleteEndpoint(TENANT, "ep-1")).toBe(true);
      // Owed to the deleted endpoint only, then a marker owed to the live one.
      await s.send("msg_deleted", ["ep-1"]);
      await s.send("msg_marker", ["ep-2"]);
      await waitFor(() => s.got("msg_marker"), { what: "the live endpoint's delivery" });
      // A fresh outbox each, each settled once after every send of its batch: once all three
      // are settled, no send of the deleted endpoint's row can still land.
      await s.settled(3);
      expect(s.receiver.requests.filter((r) => r.id === "msg_deleted")).toEqual([]);
      expect(s.receiver.rejected).toBe(0);
    });
  });
}

/** `store` with each call counted by operation name in `calls`. */
function counted(store: WebhookStore, calls: Map<string, number>): WebhookStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return (...args: unknown[]) => {
        calls.set(name, (calls.get(name) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
