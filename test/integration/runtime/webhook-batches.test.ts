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
import { createWebhookDeliverer, silentLogger } from "../../../src/runtime/index.js";
import { createWebhookSender } from "../../../src/webhooks/webhook-sender.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { connectBothForFile } from "../../support/redis-store-factory.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.js";
import { sleep, waitFor } from "../../support/wait-for.js";

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

    async function setup(secret: string) {
      const harness = createRuntimeHarness({
        provider: createScriptedProvider({ script: () => ({ events: [], response: {} }) }),
        webhooks: true,
        ...(backend === "redis" && { redis }),
        ...(backend === "cluster" && { redis: cluster }),
      });
      const hooks = harness.webhooks;
      const receiver: WebhookReceiver = await startWebhookReceiver(secret);
      const deliverer = createWebhookDeliverer({
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
      return { hooks, receiver, deliverer, endpoint, send, got };
    }

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
      // The marker went after the deleted one's row was looked at (a fresh outbox each, nudged
      // in order): give any stray send a moment to land before the check.
      await sleep(100);
      expect(s.receiver.requests.filter((r) => r.id === "msg_deleted")).toEqual([]);
      expect(s.receiver.rejected).toBe(0);
    });
  });
}
