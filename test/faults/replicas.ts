// Tether replicas as separate processes (`node dist/server/main.js`) on fixed loopback ports, for
// the fault suite: kill, pause, resume and restart each one; every line a replica logs (pino JSON)
// is kept for the audit.
import { spawn, type ChildProcess } from "node:child_process";
import { freePort } from "../support/redis-harness.js";
import { track } from "./processes.js";
import { sleep } from "../support/wait-for.js";

export interface ReplicaOptions {
  index: number;
  mainJs: string;
  /** TETHER_REDIS_URL or TETHER_REDIS_CLUSTER_NODES and friends. */
  env: Record<string, string>;
  leaseTtlMs: number;
  sweepIntervalMs: number;
}

export interface LogRecord {
  replica: string;
  msg?: string;
  [field: string]: unknown;
}

export interface Replica {
  readonly ownerId: string;
  readonly port: number;
  readonly address: string;
  /** True while the process runs and is not stopped by SIGSTOP. */
  isServing(): boolean;
  start(): Promise<void>;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
  /** Graceful restart: SIGTERM (the replica drains), then start again. */
  restart(): Promise<void>;
  /** Every log record since the first start, across restarts. */
  records(): LogRecord[];
  /** The last lines of raw output, for failure reports. */
  tail(): string;
  shutdown(): Promise<void>;
}

export async function createReplica(options: ReplicaOptions): Promise<Replica> {
  const ownerId = `replica-${options.index}`;
  const port = await freePort();
  const records: LogRecord[] = [];
  let raw: string[] = [];
  let child: ChildProcess | undefined;
  let paused = false;
  let incarnation = 0;

  const alive = (c: ChildProcess | undefined): c is ChildProcess =>
    c !== undefined && c.exitCode === null && c.signalCode === null;

  const onLine = (line: string): void => {
    raw.push(line);
    if (raw.length > 400) raw = raw.slice(-200);
    if (!line.startsWith("{")) return;
    try {
      records.push({ replica: ownerId, incarnation, ...(JSON.parse(line) as object) });
    } catch {
      // a partial line; the raw tail keeps it
    }
  };

  /** Like a supervisor: a start that fails (Redis down at boot) is tried again shortly. */
  const start = async (): Promise<void> => {
    const deadline = Date.now() + 30_000;
    for (let attempt = 1; ; attempt++) {
      try {
        await startOnce();
        return;
      } catch (error) {
        if (attempt >= 30 || Date.now() > deadline) throw error;
        await sleep(500);
      }
    }
  };

  const startOnce = async (): Promise<void> => {
    incarnation++;
    const proc = track(
      spawn(process.execPath, [options.mainJs], {
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          TETHER_HOST: "127.0.0.1",
          TETHER_PORT: String(port),
          TETHER_METRICS_PORT: "0",
          TETHER_STORE: "redis",
          TETHER_OWNER_ID: ownerId,
          TETHER_LEASE_TTL_MS: String(options.leaseTtlMs),
          TETHER_SWEEP_INTERVAL_MS: String(options.sweepIntervalMs),
          TETHER_DRAIN_TIMEOUT_MS: "2000",
          TETHER_LOG_LEVEL: "info",
          // The echo model, plus "/tool" for the turns that park on a client tool or approval.
          TETHER_PROVIDER: "scripted-tools",
          TETHER_PARK_AFTER_MS: "200",
          // Unary calls end by 2 s: with a pause (at most 2.2 s) on top, still before the suite's
          // 5 s answer deadline, so an answer open at that deadline is one the server failed to
          // bound (clients.ts counts it as hung).
          TETHER_REQUEST_TIMEOUT_MS: "2000",
          ...options.env,
        },
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    child = proc;
    paused = false;
    let buffered = "";
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString();
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        onLine(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf("\n");
      }
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        proc.kill("SIGKILL");
        reject(new Error(`${ownerId} did not start:\n${raw.slice(-20).join("\n")}`));
      }, 20_000);
      const check = setInterval(() => {
        if (raw.some((l) => l.includes(`tether listening on 127.0.0.1:${port}`))) {
          clearInterval(check);
          clearTimeout(timer);
          resolve();
        }
      }, 20);
      proc.once("exit", (code, signal) => {
        clearInterval(check);
        clearTimeout(timer);
        reject(new Error(`${ownerId} exited (${code ?? signal}):\n${raw.slice(-20).join("\n")}`));
      });
    }).finally(() => {
      proc.removeAllListeners("exit");
    });
    // The listening line was seen; drop it so the next start waits for its own.
    raw = raw.filter((l) => !l.includes(`tether listening on 127.0.0.1:${port}`));
  };

  const waitExit = async (proc: ChildProcess, escalateMs: number): Promise<void> => {
    if (!alive(proc)) return;
    const exited = new Promise((r) => proc.once("exit", r));
    const timer = setTimeout(() => proc.kill("SIGKILL"), escalateMs);
    await exited;
    clearTimeout(timer);
  };

  return {
    ownerId,
    port,
    address: `http://127.0.0.1:${port}`,
    isServing: () => alive(child) && !paused,
    start,
    async kill() {
      const proc = child;
      if (!alive(proc)) return;
      proc.kill("SIGKILL");
      await waitExit(proc, 5_000);
      paused = false;
    },
    pause() {
      if (alive(child)) {
        child.kill("SIGSTOP");
        paused = true;
      }
    },
    resume() {
      if (alive(child)) child.kill("SIGCONT");
      paused = false;
    },
    async restart() {
      const proc = child;
      if (alive(proc)) {
        if (paused) proc.kill("SIGCONT");
        proc.kill("SIGTERM");
        await waitExit(proc, 8_000);
      }
      await start();
    },
    records: () => records,
    tail: () => raw.slice(-30).join("\n"),
    async shutdown() {
      const proc = child;
      if (!alive(proc)) return;
      if (paused) proc.kill("SIGCONT");
      proc.kill("SIGTERM");
      await waitExit(proc, 5_000);
    },
  };
}
