// The hint dropped in the settle with real parts (ADR 0021 "The hint dropped in the settle"): a
// turn's event delivered and settled leaves no look for a lease later where the store keeps the
// hint in the outbox's steps (memory, a standalone Redis); on Cluster the look a lease later
// still comes. A park's session.action_required whose replica is lost after claiming it and
// before its settle is still delivered, by another deliverer, once the claim's lease ends.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { OutboxId } from "../../../src/domain/ids.js";
import { systemClock } from "../../../src/ports/clock.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import {
  createOutboxHints,
  createWebhookDeliverer,
  silentLogger,
  type WebhookDeliverer,
} from "../../../src/runtime/index.js";
import { createWebhookSender } from "../../../src/webhooks/webhook-sender.js";
import { collect, createRuntimeHarness, textCommand } from "../../support/runtime-harness.js";
import { connectBothForFile } from "../../support/redis-store-factory.js";
import { startWebhookReceiver } from "../../support/webhook-receiver.js";
import { waitFor } from "../../support/wait-for.js";

const { redis, cluster } = connectBothForFile();

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const TENANT = "acme";
/** The delivery lease, short: the writer's hint is due this long after the write. */
const LEASE_MS = 400;

/** "use <tool>" asks for that tool (deploy needs an approval: the turn parks); else an answer. */
const provider = () =>
  createScriptedProvider({
    script: (request) => {
      const last = request.messages.at(-1);
      const said =
        last?.role === "user" ? last.content.map((c) => (c.type === "text" ? c.text : "")) : [];
      const tool = /use (\w+)/u.exec(said.join(" "))?.[1];
      if (!tool) return { events: [{ type: "text_delta", text: "done" }], response: {} };
      const call = { type: "tool_call" as const, callId: `${tool}-1`, toolName: tool };
      return { response: { parts: [{ ...call, argumentsJson: "{}" }] } };
    },
  });

/**
 * The store, counting the claims and settles each outbox gets (a look is a claim), and when each
 * of the deliverer's polls for due outboxes ended.
 */
function counted(store: WebhookStore) {
  const polled: number[] = [];
  const claims = new Map<OutboxId, number>();
  const settles = new Map<OutboxId, number>();
  const hintSettles = new Map<OutboxId, number>();
  const bump = (m: Map<OutboxId, number>, id: OutboxId) => m.set(id, (m.get(id) ?? 0) + 1);
  const wrapped: WebhookStore = {
    ...store,
    claimOutbox: (id, ...rest) => (bump(claims, id), store.claimOutbox(id, ...rest)),
    settleOutboxBatch: (id, ...rest) => (bump(settles, id), store.settleOutboxBatch(id, ...rest)),
    settleOutboxHint: (id, ...rest) => (bump(hintSettles, id), store.settleOutboxHint(id, ...rest)),
    dueOutboxes: (...args) =>
      store.dueOutboxes(...args).then((due) => (polled.push(Date.now()), due)),
  };
  /** Resolves once a poll that began after `atMs` has ended and its look, if any, followed. */
  const polledAfter = async (atMs: number): Promise<void> => {
    await waitFor(() => polled.filter((t) => t > atMs).length >= 2, { what: "a later poll" });
  };
  return { wrapped, claims, settles, hintSettles, polledAfter };
}

for (const backend of ["memory", "redis", "cluster"] as const) {
  describe(`the outbox hint dropped in the settle on ${backend}`, () => {
    const closers: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });

    async function setup() {
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
        ...(backend === "redis" && { redis }),
        ...(backend === "cluster" && { redis: cluster }),
      });
      const receiver = await startWebhookReceiver(SECRET);
      closers.push(
        () => receiver.close(),
        () => harness.runtime.drain(1_000).then(() => undefined),
      );
      await harness.webhooks.createEndpoint({
        tenant: TENANT,
        endpointId: "ep-1",
        url: receiver.url,
        eventTypes: [],
        secret: SECRET,
        createdAtMs: Date.now(),
      });
      const count = counted(harness.webhooks);
      const deliverer = (backoffMs = 5): WebhookDeliverer => {
        const d = createWebhookDeliverer({
          store: count.wrapped,
          send: createWebhookSender({ allowPrivate: true, timeoutMs: 5_000 }),
          clock: systemClock,
          logger: silentLogger,
          pollMs: 20,
          leaseMs: LEASE_MS,
          backoffMs: () => backoffMs,
        });
        d.start();
        closers.push(() => d.stop());
        return d;
      };
      const keeps = harness.webhooks.keepsOutboxHint === true;
      expect(keeps).toBe(backend !== "cluster");
      return { harness, receiver, count, deliverer, keeps };
    }

    it("a delivered turn's settle leaves no look for a lease later where the store keeps the hint", async () => {
      const { harness, receiver, count, deliverer, keeps } = await setup();
      const d = deliverer();
      // Production wiring: the commit claims its rows for this deliverer, a lease ahead.
      harness.deps.webhooks = createOutboxHints(
        count.wrapped,
        systemClock,
        LEASE_MS,
        (id) => d.nudge(id),
        d,
      );
      const client = `s-${randomUUID()}`;
      const sid = `${TENANT}:${client}` as OutboxId;
      await collect(
        harness.runtime.streamTurn(
          { ...textCommand(sid, "hello"), publicSessionId: client },
          new AbortController().signal,
        ),
      );
      await waitFor(() => receiver.delivered.length === 1, { what: "the turn's delivery" });
      await waitFor(() => (count.settles.get(sid) ?? 0) >= 1, { what: "the batch's settle" });
      const claimsAfterSettle = count.claims.get(sid) ?? 0;
      // Past the lease the writer's hint was due at (it was written before the settle), with the
      // deliverer polling all along.
      await count.polledAfter(Date.now() + LEASE_MS * 2);
      const looks = (count.claims.get(sid) ?? 0) - claimsAfterSettle;
      if (keeps) expect(looks).toBe(0);
      else expect(looks).toBeGreaterThanOrEqual(1);
      // Either way nothing is listed now, and the event went out once.
      expect(await harness.webhooks.dueOutboxes(10_000)).not.toContain(sid);
      expect(receiver.delivered).toHaveLength(1);
    });

    it("a failed delivery's hint is due at its retry time, past the lease: no look before it where the store keeps the hint", async () => {
      const { harness, receiver, count, deliverer, keeps } = await setup();
      // The retry comes well after the writer's hint (a lease ahead) would have come due.
      const d = deliverer(LEASE_MS * 4);
      harness.deps.webhooks = createOutboxHints(
        count.wrapped,
        systemClock,
        LEASE_MS,
        (id) => d.nudge(id),
        d,
      );
      receiver.failNext(1);
      const client = `s-${randomUUID()}`;
      const sid = `${TENANT}:${client}` as OutboxId;
      await collect(
        harness.runtime.streamTurn(
          { ...textCommand(sid, "hello"), publicSessionId: client },
          new AbortController().signal,
        ),
      );
      await waitFor(() => receiver.delivered.length === 1, { what: "the retried delivery" });
      expect(receiver.requests.map((r) => r.status)).toEqual([500, 204]);
      // The commit claimed the row for the first attempt; the retry's is the only claim after.
      const claims = count.claims.get(sid) ?? 0;
      if (keeps) expect(claims).toBe(1);
      else expect(claims).toBeGreaterThanOrEqual(1);
    });

    it("a row a poll finds is delivered, and its settle alone drops the hint where the store keeps it", async () => {
      const { harness, receiver, count, deliverer, keeps } = await setup();
      const sid = `${TENANT}:s-${randomUUID()}` as OutboxId;
      const data = { session_id: "s", turn_id: "t1" };
      const id = `msg_${randomUUID()}`;
      const event = { id, type: "turn.completed" as const, createdAtMs: Date.now(), data };
      // A write of its own (a schedule's pause, a replay): listed in its step where the store
      // keeps the hint; on Cluster its writer notes it after.
      await harness.webhooks.enqueueWebhookEvent(sid, event);
      if (!keeps) await harness.webhooks.noteOutbox(sid, 0);
      deliverer();
      await waitFor(() => receiver.delivered.length === 1, { what: "the polled row's delivery" });
      await waitFor(() => (count.settles.get(sid) ?? 0) >= 1, { what: "the batch's settle" });
      if (!keeps) {
        await waitFor(() => (count.hintSettles.get(sid) ?? 0) >= 1, { what: "the hint's settle" });
      }
      await count.polledAfter(Date.now());
      // Where the store keeps the hint, the batch's settle dropped it: no hint settle follows.
      expect(count.hintSettles.get(sid) ?? 0).toBe(keeps ? 0 : 1);
      expect(await harness.webhooks.dueOutboxes(10_000)).not.toContain(sid);
    });

    it("a park's session.action_required is delivered after its replica is lost before its settle", async () => {
      const { harness, receiver, count, deliverer } = await setup();
      // The parking replica's deliverer takes the nudge and claims the row, then is lost: it
      // never sends or settles. Its claim's lease is short; another replica only polls.
      let lostClaims = 0;
      harness.deps.webhooks = createOutboxHints(
        harness.webhooks,
        systemClock,
        LEASE_MS,
        (id) => {
          void harness.webhooks.claimOutbox(id, "lost-replica", LEASE_MS, 16).then((r) => {
            lostClaims += r.claims.length;
          });
          return true;
        },
        { claimTicket: () => undefined, deliverClaimed: () => undefined },
      );
      const client = `s-${randomUUID()}`;
      const sid = `${TENANT}:${client}` as OutboxId;
      const controller = new AbortController();
      const stream = collect(
        harness.runtime.streamTurn(
          { ...textCommand(sid, "use deploy"), publicSessionId: client },
          controller.signal,
        ),
      ).catch(() => []);
      await waitFor(() => lostClaims === 1, { what: "the lost replica's claim" });
      deliverer();
      await waitFor(() => receiver.delivered.length === 1, {
        what: "the delivery once the lost claim's lease ended",
      });
      expect(receiver.delivered[0]?.body).toMatchObject({
        type: "session.action_required",
        data: { session_id: client, approval_call_ids: ["deploy-1"] },
      });
      // Settled by the live deliverer: nothing is left listed where the settle drops the hint.
      await waitFor(() => (count.settles.get(sid) ?? 0) >= 1, { what: "the settle" });
      controller.abort();
      await stream;
    });
  });
}
