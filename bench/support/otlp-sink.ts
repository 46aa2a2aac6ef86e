// Starts the benchmarks' OTLP/HTTP trace receiver (otlp-sink-main.ts) as a child process on
// loopback, and reads back what it counted. Its CPU is its own, reported apart from the server's
// and the clients'.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface OtlpSinkStats {
  /** Spans counted across every export so far. */
  spans: number;
  /** Export requests answered 200. */
  exports: number;
  /** Bytes of those requests' bodies. */
  bytes: number;
  /** Bodies that were not a well-formed export (answered 400). */
  rejected: number;
  /** The receiver process's own CPU (user + system) so far, in ms. */
  cpuMs: number;
}

export interface OtlpSink {
  /** http://127.0.0.1:<port>: what OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  readonly endpoint: string;
  readonly child: ChildProcess;
  stats(): Promise<OtlpSinkStats>;
  close(): Promise<void>;
}

const ENTRY = fileURLToPath(new URL("./otlp-sink-main.ts", import.meta.url));
const LISTENING = /otlp sink listening on (\d+)/u;

export async function startOtlpSink(): Promise<OtlpSink> {
  // The same Node and loader flags as this process (tsx), so the entry runs as TypeScript.
  const child = spawn(process.execPath, [...process.execArgv, ENTRY], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const port = await new Promise<string>((resolve, reject) => {
    let out = "";
    const onData = (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const found = LISTENING.exec(out)?.[1];
      if (found !== undefined) {
        child.stdout?.off("data", onData);
        resolve(found);
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`the OTLP sink exited ${code}: ${out}`)));
    child.once("error", reject);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    child,
    async stats() {
      const res = await fetch(`${endpoint}/stats`);
      return (await res.json()) as OtlpSinkStats;
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
