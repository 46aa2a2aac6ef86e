// Restartable redis-server processes for the fault suite: each keeps its port and directory
// across restarts, with AOF on (fsync on every write), so a restart loses nothing acknowledged.
// A cluster node restarts with its nodes.conf and rejoins under the same node id.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../support/redis-harness.js";
import { track } from "./processes.js";

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RestartableRedis {
  readonly port: number;
  readonly dir: string;
  /** Stops the server (SIGTERM: clean shutdown; SIGKILL: crash) and starts it again. */
  restart(signal: "SIGTERM" | "SIGKILL", downMs: number): Promise<void>;
  /** Stops the server and keeps it down until `start`. */
  halt(signal: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** Starts a halted server on its port and directory; resolves once it answers PONG. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function ping(port: number, deadlineMs: number): Promise<void> {
  const started = Date.now();
  for (let attempt = 0; attempt < 2_000; attempt++) {
    try {
      const { stdout } = await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), "ping"]);
      if (stdout.trim() === "PONG") return;
    } catch {
      // not up yet (or still loading the AOF)
    }
    if (Date.now() - started > deadlineMs) break;
    await sleep(50);
  }
  throw new Error(`redis on ${port} did not answer PONG within ${deadlineMs} ms`);
}

async function startRestartable(extraArgs: string[]): Promise<RestartableRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), `tether-faults-redis-${port}-`));
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
    "--protected-mode",
    "no",
    ...extraArgs,
  ];
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    child = track(spawn("redis-server", args, { stdio: "ignore" }));
    await ping(port, 20_000);
  };
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((r) => current.once("exit", r));
    current.kill(signal);
    const timer = setTimeout(() => current.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  await launch();
  return {
    port,
    dir,
    async restart(signal, downMs) {
      await kill(signal);
      await sleep(downMs);
      await launch();
    },
    halt: (signal) => kill(signal),
    start: launch,
    async stop() {
      await kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function startStandalone(): Promise<RestartableRedis> {
  return startRestartable([]);
}

export interface RestartableCluster {
  readonly nodes: RestartableRedis[];
  /** Waits until every node reports cluster_state:ok. */
  waitOk(deadlineMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** Three masters, no replicas; a restarted master comes back with its slots from nodes.conf. */
export async function startRestartableCluster(masters = 3): Promise<RestartableCluster> {
  const nodes: RestartableRedis[] = [];
  for (let i = 0; i < masters; i++) {
    nodes.push(
      await startRestartable([
        "--cluster-enabled",
        "yes",
        "--cluster-node-timeout",
        "3000",
        "--cluster-config-file",
        "nodes.conf",
      ]),
    );
  }
  await run("redis-cli", [
    "--cluster",
    "create",
    ...nodes.map((n) => `127.0.0.1:${n.port}`),
    "--cluster-replicas",
    "0",
    "--cluster-yes",
  ]);
  const cluster: RestartableCluster = {
    nodes,
    async waitOk(deadlineMs) {
      const started = Date.now();
      for (const node of nodes) {
        for (let attempt = 0; attempt < 2_000; attempt++) {
          const info = await run("redis-cli", ["-p", String(node.port), "cluster", "info"]).then(
            (r) => r.stdout,
            () => "",
          );
          if (info.includes("cluster_state:ok")) break;
          if (Date.now() - started > deadlineMs) throw new Error("cluster did not reach state ok");
          await sleep(100);
        }
      }
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
  await cluster.waitOk(30_000);
  return cluster;
}
