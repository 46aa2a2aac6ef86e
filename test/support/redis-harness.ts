// Starts throwaway redis-server processes on free loopback ports for the test run:
// one standalone server and a 3-master Redis Cluster. Nothing here is used by src.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { waitFor } from "./wait-for.js";

const run = promisify(execFile);

export interface RedisProcess {
  port: number;
  child: ChildProcess;
  dir: string;
  stop(): Promise<void>;
}

/** Asks the kernel for a free loopback port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A free loopback port below the kernel's ephemeral range (32768 and up on Linux), for a server
 * that is stopped and started again on its port. An ephemeral port freed by a stopped server can
 * be taken meanwhile by any process asking the kernel for a free port (another test run's Redis)
 * or by an outgoing connection's source port; then the restarted server cannot bind, and whatever
 * took the port answers in its place. Ports in 11000-21999 (a cluster's bus ports, 10000 above,
 * stay below 32768 too) are only ever handed out here.
 */
export async function stablePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = 11_000 + Math.floor(Math.random() * 11_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.unref();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    if (free) return port;
    if (attempt > 50) throw new Error("no free port in 11000-21999");
  }
}

/** The process id of the redis-server answering on `port` (0 when none answers). */
export async function redisPid(port: number): Promise<number> {
  const { stdout } = await run("redis-cli", [
    "-h",
    "127.0.0.1",
    "-p",
    String(port),
    "info",
    "server",
  ]).catch(() => ({ stdout: "" }));
  return Number(/process_id:(\d+)/u.exec(stdout)?.[1] ?? 0);
}

/** Resolves once redis-server on `port` answers PONG (it may be starting or loading its AOF). */
export async function waitForPing(port: number, deadlineMs = 10_000): Promise<void> {
  await waitFor(
    async () => {
      const { stdout } = await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), "ping"])
        // not up yet
        .catch(() => ({ stdout: "" }));
      return stdout.trim() === "PONG";
    },
    { what: `redis on ${port} to answer PONG`, timeoutMs: deadlineMs, intervalMs: 50 },
  );
}

export async function startRedis(
  extraArgs: string[] = [],
  chosenPort?: number,
): Promise<RedisProcess> {
  const port = chosenPort ?? (await freePort());
  const dir = await mkdtemp(join(tmpdir(), `tether-redis-${port}-`));
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
      "--protected-mode",
      "no",
      ...extraArgs,
    ],
    { stdio: "ignore" },
  );
  await waitForPing(port);
  return {
    port,
    child,
    dir,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisCluster {
  ports: number[];
  /** The processes behind `ports`, in the same order. */
  nodes: RedisProcess[];
  stop(): Promise<void>;
}

/**
 * Three masters, no replicas: enough to spread hash slots and catch cross-slot scripts.
 * `replicasPerMaster` adds replicas (for WAIT); `ports` then lists every node.
 */
export async function startCluster(masters = 3, replicasPerMaster = 0): Promise<RedisCluster> {
  const nodes: RedisProcess[] = [];
  for (let i = 0; i < masters * (1 + replicasPerMaster); i++) {
    nodes.push(
      await startRedis([
        "--cluster-enabled",
        "yes",
        "--cluster-node-timeout",
        "2000",
        "--cluster-config-file",
        "nodes.conf",
        "--repl-diskless-sync-delay",
        "0",
      ]),
    );
  }
  const ports = nodes.map((n) => n.port);
  await formCluster(ports, replicasPerMaster);
  await waitForClusterOk(ports, 20_000);
  return {
    ports,
    nodes,
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}

/** Joins empty cluster-enabled nodes into one cluster of masters, the slots spread over them. */
export async function formCluster(ports: readonly number[], replicas = 0): Promise<void> {
  await run("redis-cli", [
    "--cluster",
    "create",
    ...ports.map((port) => `127.0.0.1:${port}`),
    "--cluster-replicas",
    String(replicas),
    "--cluster-yes",
  ]);
}

/** Waits until every node reports cluster_state:ok; a node not answering yet counts as not ok. */
export async function waitForClusterOk(ports: readonly number[], deadlineMs: number) {
  const deadline = Date.now() + deadlineMs;
  for (const port of ports) {
    await waitFor(
      async () => {
        const info = await run("redis-cli", ["-p", String(port), "cluster", "info"]).then(
          (r) => r.stdout,
          () => "",
        );
        return info.includes("cluster_state:ok");
      },
      {
        what: `cluster_state:ok on ${port}`,
        timeoutMs: Math.max(1, deadline - Date.now()),
        intervalMs: 100,
      },
    );
  }
}

/** Waits until every master among `ports` has `replicas` online replicas (WAIT counts only those). */
export async function waitForReplicasOnline(
  ports: readonly number[],
  replicas: number,
  deadlineMs: number,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (const port of ports) {
    await waitFor(
      async () => {
        const info = await run("redis-cli", ["-p", String(port), "info", "replication"]).then(
          (r) => r.stdout,
          () => "",
        );
        const online = info.match(/state=online/gu)?.length ?? 0;
        return info.includes("role:slave") || online >= replicas;
      },
      {
        what: `${replicas} online replicas of ${port}`,
        timeoutMs: Math.max(1, deadline - Date.now()),
        intervalMs: 100,
      },
    );
  }
}
