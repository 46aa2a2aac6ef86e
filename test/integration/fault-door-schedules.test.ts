// The fault suite's schedules made through the front door (test/faults/door-schedules.ts), on one
// real server beside an address nobody answers: a create retried on "another replica" after a lost
// connection, `run_at` in whole seconds, and the judge that counts a door automation as the gRPC
// schedules are counted — one fire is fine, a second automation on the session (a create repeated
// without its key) is a duplicate, no fire by the deadline is a miss.
import { createServer } from "node:net";
import { createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDoorAutomation, judgeDoorAutomation } from "../faults/door-schedules.js";
import { checkSchedules, madeThroughDoor, planSchedules } from "../faults/schedules.js";
import { createVerificationReads } from "../faults/verify-reads.js";
import { SessionService } from "../../src/gen/tether/v1/session_service_pb.js";
import { startWiredServer, type WiredServer } from "../support/wired-server.js";

/** A loopback port that was free a moment ago: connecting to it is refused. */
async function deadAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe("the fault suite's door automations", () => {
  let wired: WiredServer;
  let addresses: string[];

  beforeAll(async () => {
    wired = await startWiredServer({});
    addresses = [wired.baseUrl, await deadAddress()];
  });
  afterAll(() => wired.close());

  it("spreads the door's share evenly among the schedules, the first one over gRPC", () => {
    const door = Array.from({ length: 20 }, (_, i) => madeThroughDoor(i, 20, 10));
    expect(door.filter(Boolean)).toHaveLength(10);
    expect(door.slice(0, 4)).toEqual([false, true, false, true]);
    expect(
      Array.from({ length: 5 }, (_, i) => madeThroughDoor(i, 5, 2)).filter(Boolean),
    ).toHaveLength(2);
    expect(Array.from({ length: 5 }, (_, i) => madeThroughDoor(i, 5, 0)).some(Boolean)).toBe(false);
  });

  it("counts each door automation and each gRPC schedule fired exactly once, split by how it was made", async () => {
    const planned = await planSchedules({
      addresses,
      prefix: `fds-${Date.now()}`,
      count: 4,
      door: 2,
      spanMs: 2_000,
    });
    const door = planned.filter((p) => p.via === "door");
    expect(door).toHaveLength(2);
    // run_at is whole seconds: the planned instant is one, and the create answered it unchanged.
    for (const p of door) expect(p.atMs % 1000).toBe(0);
    const reads = createVerificationReads({ budgetMs: 10_000 });
    const report = await checkSchedules(addresses, planned, Date.now() + 30_000, reads);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({
      schedules: 4,
      schedule_fires_missed: 0,
      schedule_fires_duplicated: 0,
      grpc: { due: 2, missed: 0, duplicated: 0 },
      door: { due: 2, missed: 0, duplicated: 0 },
    });
  });

  it("judges a second automation on the session a duplicate, and no fire by the deadline a miss", async () => {
    const sessionId = `fds-dup-${Date.now()}`;
    const sessions = createClient(SessionService, wired.as());
    await sessions.createSession({ sessionId });
    const text = `scheduled ${sessionId}`;
    const plannedMs = Date.now() + 1_000;
    const make = (name: string) =>
      createDoorAutomation({ addresses, name, sessionId, text, plannedMs, budgetMs: 10_000 });
    // Two creates under different keys: what a retry without its key honoured would leave.
    const [first] = [await make(`${sessionId}-a`), await make(`${sessionId}-b`)];
    const reads = createVerificationReads({ budgetMs: 10_000 });
    const inputs = async () => {
      const { messages } = await sessions.listMessages({ sessionId });
      return messages.filter((m) =>
        m.parts.some((p) => p.kind.case === "text" && p.kind.value === text),
      ).length;
    };
    const plan = { ...first, sessionId };
    const verdict = await judgeDoorAutomation(addresses, plan, Date.now() + 30_000, reads, inputs);
    expect(verdict.missed).toBeUndefined();
    expect(verdict.duplicated).toMatch(/2 automation\(s\) on its session/u);

    const far = await createDoorAutomation({
      addresses,
      name: `${sessionId}-far`,
      sessionId,
      text: `${text} far`,
      plannedMs: Date.now() + 3_600_000,
      budgetMs: 10_000,
    });
    const missed = await judgeDoorAutomation(
      addresses,
      { ...far, sessionId },
      Date.now(),
      reads,
      async () => 0,
    );
    expect(missed.missed).toMatch(/^0 invocation/u);
  });
});
