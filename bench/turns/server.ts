// Starts the built server (dist/server/main.js) as a child process, configured the way an
// operator would: TETHER_* variables, a free port, the default echo model and log level. Its log
// goes to a file, so reading it costs the benchmark's process nothing.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, openSync, closeSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface TetherProcess {
  name: string;
  /** host:port from the "tether listening on" line. */
  address: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

const ENTRY = "dist/server/main.js";
const LISTENING = /tether listening on (127\.0\.0\.1:\d+)/u;

export async function startTether(
  name: string,
  env: Record<string, string>,
  logDir: string,
  /** Node flags before the entry (e.g. --cpu-prof for a profiled run). */
  nodeArgs: readonly string[] = [],
  /** The built server to run: another tree's dist/server/main.js for a before/after run. */
  entry: string = ENTRY,
): Promise<TetherProcess> {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  const logFile = join(logDir, `${name}.log`);
  const fd = openSync(logFile, "w");
  const child = spawn(process.execPath, [...nodeArgs, entry], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TETHER_HOST: "127.0.0.1",
      TETHER_PORT: "0",
      TETHER_METRICS_PORT: "0",
      TETHER_OWNER_ID: `bench-${name}`,
      // A run can compare turn-start pacing settings (ADR 0025); the server's default otherwise.
      ...(process.env.TETHER_TURN_STARTS_PER_ITERATION !== undefined && {
        TETHER_TURN_STARTS_PER_ITERATION: process.env.TETHER_TURN_STARTS_PER_ITERATION,
      }),
      ...env,
    },
    stdio: ["ignore", fd, fd],
  });
  closeSync(fd);
  const log = () => readFileSync(logFile, "utf8");
  const started = Date.now();
  let address: string | undefined;
  while (!address) {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}:\n${log()}`);
    if (Date.now() - started > 20_000) throw new Error(`${name} did not start:\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
    address = LISTENING.exec(log())?.[1];
  }
  return {
    name,
    address,
    child,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(force);
    },
  };
}
