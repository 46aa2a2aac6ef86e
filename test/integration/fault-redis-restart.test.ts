// The fault suite's restartable Redis (test/faults/redis-servers.ts) restarts on its own port. A
// process that took the port while the node was down must not pass for it: the run would go on
// against someone else's Redis and verify the wrong data (issue 35, a busy shared machine).
import { afterAll, expect, it } from "vitest";
import { startStandalone, type RestartableRedis } from "../faults/redis-servers.js";
import { startRedis, type RedisProcess } from "../support/redis-harness.js";

let node: RestartableRedis | undefined;
let squatter: RedisProcess | undefined;

afterAll(async () => {
  await squatter?.stop();
  await node?.stop();
});

it("a restart whose port another Redis took meanwhile fails, naming the process that answered", async () => {
  node = await startStandalone();
  // Below the kernel's ephemeral range: no other freePort() or outgoing connection is handed it.
  expect(node.port).toBeGreaterThanOrEqual(11_000);
  expect(node.port).toBeLessThan(22_000);
  await node.halt("SIGKILL");
  squatter = await startRedis([], node.port);
  await expect(node.start()).rejects.toThrow(
    new RegExp(`port ${node.port} answered by process ${squatter.child.pid}`, "u"),
  );
  await squatter.stop();
  squatter = undefined;
  await node.start();
  expect(node.isRunning()).toBe(true);
}, 60_000);
