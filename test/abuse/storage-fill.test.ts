// Probe (issue 40, item 5; ADR 0029): one tenant tries to fill the store — many webhook
// endpoints, many sessions, metadata updates of the largest allowed value — against a real
// Redis-backed server wired as main.ts wires it. Each is refused past its limit with
// RESOURCE_EXHAUSTED; the tenant's metadata history stays within its bytes; another tenant still
// creates a session, runs a turn and adds an endpoint. Bounded: 300 endpoint attempts, 60
// sessions, 30 metadata updates.
import { randomUUID } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { QuotaFailureSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { SessionService } from "../../src/gen/tether/v1/session_service_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { WebhookService } from "../../src/gen/tether/v1/webhook_service_pb.js";
import { startWiredServer, type WiredServer } from "../support/wired-server.js";

const MIB = 1024 * 1024;
/** The defaults (ADR 0029) but for sessions, so the probe stays small. */
const SESSIONS = 50;
const ENDPOINTS = 20;
const METADATA_BYTES = MIB;
const HISTORY_BYTES = 8 * MIB;

/** The QuotaFailure's limit of a call refused RESOURCE_EXHAUSTED; "ok" when it succeeded. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    const e = ConnectError.from(error);
    if (e.code !== Code.ResourceExhausted) throw e;
    return e.findDetails(QuotaFailureSchema)[0]?.violations[0]?.quotaId ?? "(no QuotaFailure)";
  }
}

const count = (outcomes: string[]) => {
  const tally: Record<string, number> = {};
  for (const o of outcomes) tally[o] = (tally[o] ?? 0) + 1;
  return tally;
};

describe("abuse: one tenant tries to fill the store", () => {
  const run = randomUUID().slice(0, 8);
  const mallory = `mallory${run}`;
  const victim = `victim${run}`;
  const keys = { mallory: `key-mallory-${run}`, victim: `key-victim-${run}` };
  let tether: WiredServer;
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(inject("redisUrl"));
    tether = await startWiredServer({
      TETHER_STORE: "redis",
      TETHER_REDIS_URL: inject("redisUrl"),
      TETHER_API_KEYS: `${keys.mallory}=${mallory},${keys.victim}=${victim}`,
      TETHER_QUOTAS: JSON.stringify({ tenants: { [mallory]: { sessions: SESSIONS } } }),
    });
  });
  afterAll(async () => {
    await tether.close();
    await redis.quit();
  });

  test("endpoints, sessions and metadata history stop at their limits; another tenant still runs a turn", async () => {
    const hooks = createClient(WebhookService, tether.as(keys.mallory));
    const endpoints: string[] = [];
    for (let i = 0; i < 300; i++) {
      const url = `https://hooks.example.com/${i}`;
      endpoints.push(await outcome(hooks.createWebhookEndpoint({ endpointId: `e${i}`, url })));
    }
    expect(count(endpoints)).toEqual({ ok: ENDPOINTS, webhook_endpoints: 300 - ENDPOINTS });
    expect((await hooks.listWebhookEndpoints({})).endpoints).toHaveLength(ENDPOINTS);

    const sessions = createClient(SessionService, tether.as(keys.mallory));
    const created: string[] = [];
    for (let i = 0; i < 60; i++) {
      created.push(await outcome(sessions.createSession({ sessionId: `s${i}` })));
    }
    expect(count(created)).toEqual({ ok: SESSIONS, sessions: 60 - SESSIONS });

    // 30 updates of the largest value the metadata limit allows (key "k" + value = 1 MiB).
    const value = "v".repeat(METADATA_BYTES - 1);
    const updates: string[] = [];
    for (let i = 0; i < 30; i++) {
      const varied = `${String(i % 10)}${value.slice(1)}`;
      updates.push(
        await outcome(sessions.updateSessionMetadata({ sessionId: "s0", metadata: { k: varied } })),
      );
    }
    // The first patch counts 1 MiB of history, so eight fit in 8 MiB; the rest are refused.
    expect(count(updates)).toEqual({ ok: 8, metadata_history_bytes: 22 });
    expect(
      await outcome(
        sessions.updateSessionMetadata({
          sessionId: "s1",
          metadata: { k: value, more: "x" },
        }),
      ),
    ).toBe("session_metadata_bytes");
    const log = `tether:{${mallory}:s0}:metadata:log`;
    const entries = await redis.lrange(log, 0, -1);
    const logged = entries.reduce((sum, e) => sum + Buffer.byteLength(e), 0);
    expect(entries).toHaveLength(8);
    // The patches as JSON, a few bytes each over their keys and values.
    expect(logged).toBeLessThanOrEqual(HISTORY_BYTES + 8 * 64);

    // The other tenant is untouched by the first one's use.
    const other = createClient(SessionService, tether.as(keys.victim));
    await other.createSession({ sessionId: "mine", metadata: { note: "hello" } });
    let finished = false;
    for await (const r of createClient(TurnService, tether.as(keys.victim)).streamTurn({
      sessionId: "mine",
      input: [{ kind: { case: "text", value: "hello" } }],
    })) {
      if (r.event?.event.case === "turnCompleted") finished = true;
    }
    expect(finished).toBe(true);
    const victimHooks = createClient(WebhookService, tether.as(keys.victim));
    const mine = await victimHooks.createWebhookEndpoint({
      endpointId: "ops",
      url: "https://hooks.example.com/victim",
    });
    expect(mine.endpoint?.endpointId).toBe("ops");
  }, 120_000);
});
