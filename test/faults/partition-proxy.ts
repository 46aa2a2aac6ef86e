// The runner's side of the partition proxies (partition-proxy-child.ts runs them): routes for a
// Tether replica to every Redis port it may reach (data nodes and Sentinels), the environment
// that sends its connections through them (redis-route.mjs), and the `partition` fault: freeze
// all of one replica's Redis connections without closing them, then heal.
import { fork, type ChildProcess } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ProxyReply, ProxyRequest } from "./partition-proxy-child.js";
import { track } from "./processes.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");

type Body<T> = T extends unknown ? Omit<T, "id"> : never;

export interface PartitionProxies {
  /** The environment that routes one Tether replica's Redis connections through its proxies. */
  envFor(owner: string): Promise<Record<string, string>>;
  /** Freezes every connection of `owner`; resolves with how many were open. */
  partition(owner: string): Promise<number>;
  heal(owner: string): Promise<void>;
  close(): Promise<void>;
}

export async function startPartitionProxies(ports: readonly number[]): Promise<PartitionProxies> {
  const child: ChildProcess = track(
    fork(join(here, "partition-proxy-child.ts"), [], {
      cwd: repo,
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    }),
  );
  await new Promise<void>((resolveSpawn, reject) => {
    child.once("spawn", resolveSpawn);
    child.once("error", reject);
  });
  let next = 0;
  const waiting = new Map<number, (reply: ProxyReply) => void>();
  child.on("message", (reply: ProxyReply) => {
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  const ask = (body: Body<ProxyRequest>): Promise<ProxyReply> =>
    new Promise((resolveReply, reject) => {
      const id = ++next;
      const timer = setTimeout(() => reject(new Error(`proxy ${body.op} timed out`)), 10_000);
      waiting.set(id, (reply) => {
        clearTimeout(timer);
        if (reply.error !== undefined) reject(new Error(reply.error));
        else resolveReply(reply);
      });
      child.send({ ...body, id } as ProxyRequest);
    });
  return {
    async envFor(owner) {
      const reply = await ask({ op: "route", owner, ports: [...ports] });
      return {
        FAULTS_REDIS_ROUTES: (reply.routes ?? []).map(([from, to]) => `${from}:${to}`).join(","),
        NODE_OPTIONS: `--import ${pathToFileURL(join(here, "redis-route.mjs")).href}`,
      };
    },
    partition: async (owner) => (await ask({ op: "partition", owner })).frozen ?? 0,
    heal: async (owner) => void (await ask({ op: "heal", owner })),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      await ask({ op: "close" }).catch(() => undefined);
      child.disconnect();
      const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
