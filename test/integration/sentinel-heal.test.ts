// The fault suite's heal on a real Sentinel topology (test/faults/sentinel-heal.ts). Intact, it
// finds the primary and changes nothing. With no promotable replica (both at priority 0, as a
// starved machine's replicas look to Sentinel for tens of seconds), the primary's death is
// diagnosed in Sentinel's terms, not failed: the replica with the largest offset is promoted by
// hand, Sentinel follows it, the killed node comes back as its replica, and what was written
// with WAIT before the kill is there.
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { healSentinel } from "../faults/sentinel-heal.js";
import {
  probe,
  sentinelCommand,
  startSentinelTopology,
  type SentinelTopology,
} from "../support/sentinel-topology.js";
import { waitFor } from "../support/wait-for.js";

let topology: SentinelTopology;

beforeAll(async () => {
  topology = await startSentinelTopology(2, { downAfterMs: 500 });
}, 90_000);

afterAll(async () => {
  await topology.stop();
});

async function onNode<T>(port: number, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = probe(port);
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}

it("heals a topology whose Sentinel has no promotable replica, with a diagnosis instead of a failure", async () => {
  const options = { downAfterMs: 500, promotionWaitMs: 5_000, deadlineMs: 60_000 };
  const intact = await healSentinel(topology, options);
  const primary = await topology.primaryPort();
  expect(intact).toMatchObject({ primary, restarted: [] });
  expect(intact.diagnosis).toBeUndefined();

  await onNode(primary, async (c) => {
    await c.set("acknowledged", "before the kill");
    expect(await c.call("WAIT", "2", "5000")).toBe(2);
  });
  const replicas = topology.nodes.map((n) => n.port).filter((p) => p !== primary);
  for (const port of replicas) {
    await onNode(port, (c) => c.config("SET", "replica-priority", "0"));
  }
  // Every Sentinel must have seen the priorities (its INFO refresh), or it could still promote.
  await waitFor(
    async () => {
      for (const s of topology.sentinels) {
        const known = (await sentinelCommand(
          s.port,
          "REPLICAS",
          topology.masterName,
        )) as string[][];
        const zero = known.filter((f) => f[f.indexOf("slave-priority") + 1] === "0");
        if (zero.length < replicas.length) return false;
      }
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: "the Sentinels to see priority 0" },
  );
  const victim = topology.node(primary).child;
  const exited = new Promise((r) => victim.once("exit", r));
  victim.kill("SIGKILL");
  await exited;

  const healed = await healSentinel(topology, options);
  expect(replicas).toContain(healed.primary);
  expect(healed.restarted).toEqual([primary]);
  expect(healed.diagnosis?.kind).toBe("no_promotable_replica");
  expect(healed.diagnosis?.primary.address).toBe(`127.0.0.1:${primary}`);
  expect(healed.diagnosis?.replicas.map((r) => r.excluded_because)).toEqual([
    expect.arrayContaining(["priority 0"]),
    expect.arrayContaining(["priority 0"]),
  ]);
  expect(healed.diagnosis?.healed_by).toContain(`127.0.0.1:${healed.primary}`);
  expect(await topology.primaryPort()).toBe(healed.primary);
  const viaSentinel = new Redis({
    sentinels: topology.sentinels,
    name: topology.masterName,
    role: "master",
  });
  try {
    expect(await viaSentinel.get("acknowledged")).toBe("before the kill");
    await viaSentinel.set("after", "the heal");
    expect(await viaSentinel.call("WAIT", "2", "5000")).toBe(2);
  } finally {
    viaSentinel.disconnect();
  }
}, 180_000);
