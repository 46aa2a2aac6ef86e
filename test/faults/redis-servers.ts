// Restartable redis-server processes for the fault suite: each keeps its port and directory
// across restarts, with AOF on (fsync on every write), so a restart loses nothing acknowledged.
// A cluster node restarts with its nodes.conf and rejoins under the same node id.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  formCluster,
  redisPid,
  stablePort,
  waitForClusterOk,
  waitForPing,
} from "../support/redis-harness.js";
import { track } from "./processes.js";
import { sleep } from "../support/wait-for.js";

export interface RestartableRedis {
  readonly port: number;
  readonly dir: string;
  /** Stops the server (SIGTERM: clean shutdown; SIGKILL: crash) and starts it again. */
  restart(signal: "SIGTERM" | "SIGKILL", downMs: number): Promise<void>;
  /** Stops the server and keeps it down until `start`. */
  halt(signal: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** Starts a halted server on its port and directory; resolves once it answers PONG. */
  start(): Promise<void>;
  /** Whether a server process is up (false after halt, or a crash, until start). */
  isRunning(): boolean;
  /** SIGSTOP / SIGCONT the running server (a replica left behind by its primary). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/** redis-server ended before it answered PING (a port taken, say): nothing listens on `port`. */
class RedisExited extends Error {}

/**
 * A port found free can be taken before redis-server binds it, and a cluster node also needs its
 * bus port, 10,000 above, which nothing checked: either way the server exits at once. Another
 * port is tried then, up to three in all.
 */
async function startRestartable(extraArgs: string[]): Promise<RestartableRedis> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRestartableOnce(extraArgs);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof RedisExited)) throw error;
    }
  }
}

async function startRestartableOnce(extraArgs: string[]): Promise<RestartableRedis> {
  // Restarted on this port many times: one no other process is handed meanwhile.
  const port = await stablePort();
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
    const launched = track(spawn("redis-server", args, { stdio: "ignore" }));
    child = launched;
    const exited = new Promise<never>((_, reject) =>
      launched.once("exit", (code, signal) =>
        reject(new RedisExited(`redis on ${port} exited (${code ?? signal}) before it answered`)),
      ),
    );
    const answered = waitForPing(port, 20_000);
    // Whichever loses is settled later (a kill ends every server; PING polls run out): unheard.
    exited.catch(() => undefined);
    answered.catch(() => undefined);
    // The answer must come from this server, not from a process that took the port while it was
    // down (the run would then go on against someone else's Redis and verify the wrong data);
    // such a process also makes this server exit at once, unable to bind.
    const outcome = await Promise.race([answered, exited]).catch((error: unknown) => error);
    const pid = await redisPid(port);
    if (pid !== 0 && pid !== launched.pid) {
      throw new Error(`port ${port} answered by process ${pid}, not redis-server ${launched.pid}`);
    }
    if (outcome instanceof Error) throw outcome;
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
  try {
    await launch();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    dir,
    async restart(signal, downMs) {
      await kill(signal);
      await sleep(downMs);
      await launch();
    },
    halt: (signal) => kill(signal),
    isRunning: () => child !== undefined && child.exitCode === null && child.signalCode === null,
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
