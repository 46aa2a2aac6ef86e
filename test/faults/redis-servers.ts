// Restartable redis-server processes for the fault suite: each keeps its port and directory
// across restarts, with AOF on (fsync on every write), so a restart loses nothing acknowledged.
// A cluster node restarts with its nodes.conf and rejoins under the same node id.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formCluster, freePort, waitForClusterOk, waitForPing } from "../support/redis-harness.js";
import { track } from "./processes.js";

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
  /** SIGSTOP / SIGCONT the running server (a replica left behind by its primary). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
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
    await waitForPing(port, 20_000);
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
    pause: () => void child?.kill("SIGSTOP"),
    resume: () => void child?.kill("SIGCONT"),
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

/**
 * Three masters; a restarted master comes back with its slots from nodes.conf. With
 * `replicasPerMaster`, each master gets that many replicas, and a short node timeout so a killed
 * master is failed over in a couple of seconds; a replica may always stand (validity factor 0),
 * and the shards still up keep serving while one is failed over (full coverage not required).
 */
export async function startRestartableCluster(
  masters = 3,
  replicasPerMaster = 0,
): Promise<RestartableCluster> {
  const nodes: RestartableRedis[] = [];
  const failover =
    replicasPerMaster > 0
      ? [
          ...["--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0"],
          ...["--cluster-require-full-coverage", "no", "--repl-diskless-sync-delay", "0"],
        ]
      : ["--cluster-node-timeout", "3000"];
  for (let i = 0; i < masters * (1 + replicasPerMaster); i++) {
    nodes.push(
      await startRestartable([
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        ...failover,
      ]),
    );
  }
  const ports = nodes.map((n) => n.port);
  await formCluster(ports, replicasPerMaster);
  const cluster: RestartableCluster = {
    nodes,
    waitOk: (deadlineMs) => waitForClusterOk(ports, deadlineMs),
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
  await cluster.waitOk(30_000);
  return cluster;
}
