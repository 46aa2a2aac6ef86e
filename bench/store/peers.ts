// The peers the turn cycle is compared with, on the same Redis in the same run: BullMQ job
// cycles, redlock lock cycles, and redis-benchmark's EVALSHA of a trivial script (the ceiling).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import Redlock from "redlock";
import { runConcurrently, summarize, type RunStats } from "../support/stats.js";

const run = promisify(execFile);

/** Add a job, a worker takes it, completes it: latency from add to completion. */
export async function bullmqJobCycles(
  port: number,
  jobs: number,
  concurrency: number,
): Promise<RunStats> {
  const connection = { host: "127.0.0.1", port, maxRetriesPerRequest: null };
  const name = `bench-${Date.now()}`;
  const queue = new Queue(name, { connection });
  const pending = new Map<string, () => void>();
  const worker = new Worker(name, () => Promise.resolve("done"), {
    connection,
    concurrency,
    autorun: true,
  });
  worker.on("completed", (job) => {
    const done = job.id ? pending.get(job.id) : undefined;
    if (done) done();
  });
  await worker.waitUntilReady();
  await queue.waitUntilReady();
  const { latenciesMs, seconds } = await runConcurrently(jobs, concurrency, async (i) => {
    const jobId = `job-${i}`;
    const completed = new Promise<void>((resolve) => pending.set(jobId, resolve));
    await queue.add("cycle", { i }, { jobId, removeOnComplete: true });
    await completed;
    pending.delete(jobId);
  });
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return summarize(latenciesMs, seconds);
}

/** Acquire and release a lock on a distinct resource per cycle. */
export async function redlockCycles(
  port: number,
  cycles: number,
  concurrency: number,
): Promise<RunStats> {
  const client = new Redis({ host: "127.0.0.1", port });
  const redlock = new Redlock([client], { retryCount: 0 });
  const { latenciesMs, seconds } = await runConcurrently(cycles, concurrency, async (i) => {
    const lock = await redlock.acquire([`bench:lock:${i}`], 10_000);
    await lock.release();
  });
  client.disconnect();
  return summarize(latenciesMs, seconds);
}

/** redis-benchmark running EVALSHA of `return 1`, the raw ceiling of one script per round trip. */
export async function evalshaCeiling(
  port: number,
  requests: number,
  concurrency: number,
): Promise<RunStats> {
  const client = new Redis({ host: "127.0.0.1", port });
  const sha = (await client.script("LOAD", "return 1")) as string;
  client.disconnect();
  const { stdout } = await run("redis-benchmark", [
    "-h",
    "127.0.0.1",
    "-p",
    String(port),
    "-n",
    String(requests),
    "-c",
    String(concurrency),
    "--csv",
    "EVALSHA",
    sha,
    "0",
  ]);
  // CSV: "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
  const row = stdout.trim().split("\n").at(-1) ?? "";
  const cols = row.split(",").map((c) => Number(c.replaceAll('"', "")));
  const rps = cols[1] ?? 0;
  return {
    ops: requests,
    seconds: requests / rps,
    opsPerSecond: rps,
    p50Ms: cols[4] ?? 0,
    p99Ms: cols[6] ?? 0,
  };
}
