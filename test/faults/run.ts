// The fault-injection suite (`npm run test:faults`): three Tether replicas as separate processes
// share one Redis (then a 3-master Redis Cluster); concurrent clients submit inputs to random
// replicas while a controller SIGKILLs, pauses (SIGSTOP past the lease TTL, then SIGCONT) and
// restarts replicas and restarts Redis (AOF on). At the end the records in Redis are checked
// against what the clients were acknowledged, and the clients' recorded history against the
// sessions read back through the API (history/check.ts, ADR 0018). Prints a table; the last line
// is one JSON object.
import { execFile } from "node:child_process";
import { mkdir, readdir, rm, stat, writeFile, cp } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ConnectError } from "@connectrpc/connect";
import { Cluster, Redis } from "ioredis";
import { audit, type AuditReport } from "./audit.js";
import { runWorkload } from "./clients.js";
import { checkHistory, type HistoryCheckReport } from "./history/check.js";
import { probeOutage, type OutageReport } from "./outage.js";
import { probeQuotaSlotKill, type QuotaSlotReport } from "./quota-slot.js";
import {
  compactionKillOnly,
  probeCompactionKill,
  type CompactionKillReport,
} from "./compaction-kill.js";
import { killAll } from "./processes.js";
import { checkSchedules, planSchedules, type ScheduleFaultReport } from "./schedules.js";
import {
  FAULT_WEBHOOK_ENV,
  checkWebhooks,
  registerEndpoint,
  startFaultReceiver,
  type WebhookReport,
} from "./webhooks.js";
import { readFinalSessions } from "./readback.js";
import { createReplica, type LogRecord, type Replica } from "./replicas.js";
import {
  startRestartableCluster,
  startStandalone,
  type RestartableRedis,
} from "./redis-servers.js";

const run = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const buildDir = join(repo, ".tmp/faults/dist");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const FAULT_KINDS = ["replica_kill", "replica_pause", "replica_restart", "redis_restart"] as const;
type FaultKind = (typeof FAULT_KINDS)[number];

interface RunOptions {
  name: "standalone" | "cluster";
  durationMs: number;
  faultIntervalMs: number;
  clients: number;
  readers: number;
  sessions: number;
  leaseTtlMs: number;
  sweepIntervalMs: number;
  seed: number;
}

interface RunReport extends AuditReport {
  name: string;
  seconds: number;
  operations: { streamTurn: number; watchSession: number; getSession: number; inputs: number };
  faults: Record<FaultKind, number>;
  resumed_by_cursor: number;
  resubmitted: number;
  client_errors: Record<string, number>;
  /** A sample message per error code other than UNAVAILABLE and CANCELED. */
  client_error_samples: Record<string, string>;
  /** Error records the replicas logged, by message and cause, with counts. */
  replica_errors: Record<string, number>;
  /** The long Redis outage after the workload (standalone run only). */
  outage?: OutageReport;
  /** A replica killed while it holds a tenant's only concurrency slot (ADR 0015). */
  quota_slot: QuotaSlotReport;
  /** A replica killed during a compaction's summary call, twice (ADR 0019). */
  compaction_kill: CompactionKillReport;
  /** The history checker's verdict on every client operation of the run. */
  history: HistoryCheckReport;
  /** One-off schedules due across the run: each must fire exactly once (ADR 0020). */
  schedules: ScheduleFaultReport;
  /** Every committed turn's webhook delivered at least once (ADR 0021). */
  webhooks: WebhookReport;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function envNumber(name: string, fallback: number): number {
  const value = process.env[name];
  return value === undefined || value === "" ? fallback : Number(value);
}

async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

/** The production build, in a directory of its own; rebuilt when src changed since. */
async function ensureBuild(): Promise<string> {
  const mainJs = join(buildDir, "server/main.js");
  const stamp = join(buildDir, ".built-at");
  const builtAt = await stat(stamp).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (builtAt > (await newestMtime(join(repo, "src")))) return mainJs;
  process.stdout.write("building the server into .tmp/faults/dist ...\n");
  await rm(buildDir, { recursive: true, force: true });
  await run(
    join(repo, "node_modules/.bin/tsc"),
    ["-p", join(repo, "tsconfig.build.json"), "--outDir", buildDir],
    { timeout: 300_000 },
  );
  await cp(join(repo, "src/store/redis/lua"), join(buildDir, "store/redis/lua"), {
    recursive: true,
  });
  await mkdir(buildDir, { recursive: true });
  await writeFile(stamp, new Date().toISOString());
  return mainJs;
}

async function runOnce(options: RunOptions, mainJs: string): Promise<RunReport> {
  const started = Date.now();
  const random = mulberry32(options.seed);
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
  const jitter = (low: number, high: number) => low + random() * (high - low);
  process.stdout.write(
    `\n[${options.name}] starting Redis and 3 replicas (seed ${options.seed})\n`,
  );

  let standalone: RestartableRedis | undefined;
  let cluster: Awaited<ReturnType<typeof startRestartableCluster>> | undefined;
  let env: Record<string, string>;
  if (options.name === "standalone") {
    standalone = await startStandalone();
    env = { TETHER_REDIS_URL: `redis://127.0.0.1:${standalone.port}` };
  } else {
    cluster = await startRestartableCluster();
    env = {
      TETHER_REDIS_CLUSTER_NODES: cluster.nodes.map((n) => `127.0.0.1:${n.port}`).join(","),
    };
  }
  env = { ...env, ...FAULT_WEBHOOK_ENV };
  const receiver = await startFaultReceiver();
  const redisNodes = standalone ? [standalone] : (cluster?.nodes ?? []);
  const replicas: Replica[] = [];
  const faults: Record<FaultKind, number> = {
    replica_kill: 0,
    replica_pause: 0,
    replica_restart: 0,
    redis_restart: 0,
  };
  try {
    for (let i = 0; i < 3; i++) {
      const replica = await createReplica({
        index: i + 1,
        mainJs,
        env,
        leaseTtlMs: options.leaseTtlMs,
        sweepIntervalMs: options.sweepIntervalMs,
      });
      await replica.start();
      replicas.push(replica);
    }

    // Due one after another while the faults run; judged after them.
    const planned = await planSchedules({
      addresses: replicas.map((r) => r.address),
      prefix: `fs-${options.name}-${options.seed}`,
      count: envNumber("FAULTS_SCHEDULES", 20),
      spanMs: Math.max(1_000, options.durationMs - 3_000),
    });
    await registerEndpoint(
      replicas.map((r) => r.address),
      receiver.url,
    );
    const sessions = Array.from(
      { length: options.sessions },
      (_, i) => `fault-${options.name}-${options.seed}-${i}`,
    );
    const submitUntilMs = Date.now() + options.durationMs;
    const workload = runWorkload({
      addresses: replicas.map((r) => r.address),
      sessions,
      clients: options.clients,
      submitUntilMs,
      giveUpAtMs: submitUntilMs + 60_000,
      random,
      readers: options.readers,
    });

    // The controller: one fault per tick, kinds in rotation, never two at once on one target.
    const busy = new Set<string>();
    const pending: Promise<void>[] = [];
    const faultFailures: string[] = [];
    // Each fault's steps run in the background; a failure is recorded, never left unhandled.
    const running = {
      push: (step: Promise<void>) =>
        pending.push(step.catch((error: unknown) => void faultFailures.push(String(error)))),
    };
    const inject = async (kind: FaultKind): Promise<boolean> => {
      if (kind === "redis_restart") {
        if (busy.has("redis")) return false;
        busy.add("redis");
        const node = pick(redisNodes);
        const signal = faults.redis_restart % 2 === 0 ? "SIGKILL" : "SIGTERM";
        running.push(
          (async () => {
            await node.restart(signal, jitter(200, 900));
            if (cluster) await cluster.waitOk(30_000);
          })().finally(() => busy.delete("redis")),
        );
        faults.redis_restart++;
        return true;
      }
      const free = replicas.filter((r) => !busy.has(r.ownerId) && r.isServing());
      // Keep one replica untouched so clients always have somewhere to go.
      if (free.length < 2) return false;
      const replica = pick(free);
      busy.add(replica.ownerId);
      const done = () => busy.delete(replica.ownerId);
      if (kind === "replica_kill") {
        running.push(
          (async () => {
            await replica.kill();
            await sleep(jitter(200, 1_200));
            await replica.start();
          })().finally(done),
        );
      } else if (kind === "replica_pause") {
        replica.pause();
        running.push(
          (async () => {
            // Past the lease TTL, so the paused holder's leases expire under it.
            await sleep(jitter(1.3, 2.2) * options.leaseTtlMs);
            replica.resume();
            await sleep(300);
          })().finally(done),
        );
      } else {
        running.push(replica.restart().finally(done));
      }
      faults[kind]++;
      return true;
    };
    await sleep(1_000);
    let next = 0;
    for (let tick = 0; tick < 100_000 && Date.now() < submitUntilMs - 500; tick++) {
      const kind = FAULT_KINDS[next % FAULT_KINDS.length] as FaultKind;
      if (await inject(kind)) next++;
      await sleep(options.faultIntervalMs);
    }
    await Promise.all(pending);
    for (const failure of faultFailures) process.stdout.write(`fault step failed: ${failure}\n`);
    // Every replica serves again while the clients finish.
    for (const replica of replicas) if (!replica.isServing()) await replica.start();
    const report = await workload;
    const schedules = await checkSchedules(
      replicas.map((r) => r.address),
      planned,
      Date.now() + 30_000,
    );
    const outage = standalone
      ? await probeOutage(
          standalone,
          replicas.map((r) => r.address),
        )
      : undefined;

    // Read back after the outage too: a Redis restart that lost acknowledged state shows here.
    const final = await readFinalSessions(
      replicas.map((r) => r.address),
      sessions,
    );
    const history = checkHistory(report.history, final);
    await writeFile(
      join(repo, `.tmp/faults/history-${options.name}.json`),
      JSON.stringify({ events: report.history, final, history }),
    );

    const auditRedis = standalone
      ? new Redis(`redis://127.0.0.1:${standalone.port}`)
      : new Cluster((cluster?.nodes ?? []).map((n) => ({ host: "127.0.0.1", port: n.port })));
    const logs = replicas.flatMap((r) => r.records());
    let verdict: AuditReport;
    let webhooks: WebhookReport;
    try {
      webhooks = await checkWebhooks(auditRedis, sessions, receiver, 60_000);
      process.stdout.write(`[${options.name}] webhooks: ${JSON.stringify(webhooks)}\n`);
      verdict = await audit(auditRedis, report.inputs, sessions, logs);
    } finally {
      auditRedis.disconnect();
    }
    const clientErrors: Record<string, number> = {};
    const samples: Record<string, string> = {};
    for (const input of report.inputs) {
      for (const [code, count] of Object.entries(input.errors)) {
        clientErrors[code] = (clientErrors[code] ?? 0) + count;
      }
      for (const [code, message] of Object.entries(input.messages)) {
        if (code !== "Unavailable" && code !== "Canceled") samples[code] ??= message;
      }
    }
    if (verdict.problems.length > 0) {
      for (const replica of replicas) {
        process.stdout.write(`--- ${replica.ownerId} (last lines)\n${replica.tail()}\n`);
      }
    }
    // The workload's replicas know no quotas: they stop before the quota probe's own two start.
    await Promise.allSettled(replicas.map((r) => r.shutdown()));
    const quotaSlot = await runQuotaProbe(options, mainJs, env);
    const compactionKill = await probeCompactionKill({ ...options, mainJs, env });
    process.stdout.write(`[${options.name}] compaction kill: ${JSON.stringify(compactionKill)}\n`);
    return {
      name: options.name,
      quota_slot: quotaSlot,
      compaction_kill: compactionKill,
      schedules,
      seconds: Math.round((Date.now() - started) / 1000),
      operations: { ...report.operations, inputs: report.inputs.length },
      faults,
      resumed_by_cursor: report.inputs.reduce((n, i) => n + i.resumedByCursor, 0),
      resubmitted: report.inputs.reduce((n, i) => n + i.resubmitted, 0),
      client_errors: clientErrors,
      client_error_samples: samples,
      replica_errors: replicaErrors(logs),
      ...(outage ? { outage } : {}),
      history,
      webhooks,
      ...verdict,
    };
  } finally {
    await Promise.allSettled(replicas.map((r) => r.shutdown()));
    await standalone?.stop();
    await cluster?.stop();
    await receiver.close();
  }
}

async function runQuotaProbe(
  options: RunOptions,
  mainJs: string,
  env: Record<string, string>,
): Promise<QuotaSlotReport> {
  const nodes = env.TETHER_REDIS_CLUSTER_NODES?.split(",") ?? [];
  const redis =
    nodes.length > 0
      ? new Cluster(nodes.map((n) => ({ host: "127.0.0.1", port: Number(n.split(":")[1]) })))
      : new Redis(env.TETHER_REDIS_URL ?? "");
  try {
    const report = await probeQuotaSlotKill({ ...options, mainJs, env, redis });
    process.stdout.write(`[${options.name}] quota slot kill: ${JSON.stringify(report)}\n`);
    return report;
  } finally {
    redis.disconnect();
  }
}

/** FAULTS_KINDS=quota_slot_kill: that probe alone, on a fresh Redis per mode (no workload). */
async function quotaProbeOnly(modes: string[], mainJs: string): Promise<void> {
  const runs: Record<string, QuotaSlotReport> = {};
  for (const name of modes as RunOptions["name"][]) {
    const standalone = name === "standalone" ? await startStandalone() : undefined;
    const cluster = name === "cluster" ? await startRestartableCluster() : undefined;
    const env: Record<string, string> = standalone
      ? { TETHER_REDIS_URL: `redis://127.0.0.1:${standalone.port}` }
      : {
          TETHER_REDIS_CLUSTER_NODES: (cluster?.nodes ?? [])
            .map((n) => `127.0.0.1:${n.port}`)
            .join(","),
        };
    const leaseTtlMs = envNumber("FAULTS_LEASE_TTL_MS", 1_000);
    const options = { name, leaseTtlMs, sweepIntervalMs: 250 } as RunOptions;
    try {
      runs[name] = await runQuotaProbe(options, mainJs, env);
    } finally {
      await standalone?.stop();
      await cluster?.stop();
    }
  }
  process.stdout.write(`${JSON.stringify({ quota_slot: runs })}\n`);
}

function replicaErrors(logs: LogRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const record of logs) {
    if (typeof record.level !== "number" || record.level < 50) continue;
    const err = (record.err ?? record.error) as { message?: string; code?: string } | undefined;
    const key = `${record.msg ?? ""}: ${err?.message ?? err?.code ?? ""}`.slice(0, 160);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

function table(reports: RunReport[]): string {
  const rows: [string, (r: RunReport) => string | number][] = [
    ["seconds", (r) => r.seconds],
    ["StreamTurn calls", (r) => r.operations.streamTurn],
    ["WatchSession calls (resume by cursor)", (r) => r.operations.watchSession],
    ["inputs submitted", (r) => r.operations.inputs],
    ["GetSession reads", (r) => r.operations.getSession],
    ["history operations checked", (r) => r.history.operations],
    ["history violations", (r) => r.history.violations.length + r.history.omitted],
    ...FAULT_KINDS.map((k): [string, (r: RunReport) => number] => [
      `faults: ${k}`,
      (r) => r.faults[k],
    ]),
    ["inputs acknowledged", (r) => r.acknowledged],
    ["inputs committed", (r) => r.committed],
    ["inputs lost", (r) => r.lost],
    ["inputs duplicated", (r) => r.duplicated],
    ["stale commits", (r) => r.stale_commits],
    ["revision gaps", (r) => r.revision_gaps],
    ["turns committed cut short", (r) => r.malformed_turns],
    ["streams incomplete", (r) => r.incomplete_streams],
    ["turns abandoned (lease lost)", (r) => r.turns_abandoned_lease_lost],
    ["completions announced by a successor", (r) => r.recovered_announcements],
    ["turns parked (and resumed)", (r) => r.parked_turns],
    ["model calls repeated after a park", (r) => r.model_calls_repeated],
    ["tools run again after a park", (r) => r.tools_reexecuted],
    ["tool results accepted / lost", (r) => `${r.answers_accepted}/${r.answers_lost}`],
    [
      "long Redis outage: replicas NOT_SERVING / UNAVAILABLE / serving again / turn after",
      (r) =>
        r.outage
          ? `${r.outage.not_serving_while_down}/${r.outage.unavailable_while_down}/${r.outage.serving_after}/${r.outage.turn_after}`
          : "-",
    ],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const header = `${"".padEnd(width)}  ${reports.map((r) => r.name.padStart(10)).join("  ")}`;
  return [
    header,
    ...rows.map(
      ([label, value]) =>
        `${label.padEnd(width)}  ${reports.map((r) => String(value(r)).padStart(10)).join("  ")}`,
    ),
  ].join("\n");
}

async function main(): Promise<void> {
  const started = Date.now();
  const seed = envNumber("FAULTS_SEED", Date.now() % 1_000_000);
  const modes = (process.env.FAULTS_MODES ?? "standalone,cluster").split(",");
  const mainJs = await ensureBuild();
  if (process.env.FAULTS_KINDS === "quota_slot_kill") return quotaProbeOnly(modes, mainJs);
  if (process.env.FAULTS_KINDS === "compaction_kill") return compactionKillOnly(modes, mainJs);
  const common = {
    clients: envNumber("FAULTS_CLIENTS", 12),
    readers: envNumber("FAULTS_READERS", 2),
    sessions: envNumber("FAULTS_SESSIONS", 8),
    leaseTtlMs: envNumber("FAULTS_LEASE_TTL_MS", 1_000),
    sweepIntervalMs: 250,
  };
  const reports: RunReport[] = [];
  if (modes.includes("standalone")) {
    reports.push(
      await runOnce(
        {
          ...common,
          name: "standalone",
          durationMs: envNumber("FAULTS_STANDALONE_MS", 150_000),
          faultIntervalMs: envNumber("FAULTS_INTERVAL_MS", 1_400),
          seed,
        },
        mainJs,
      ),
    );
  }
  if (modes.includes("cluster")) {
    reports.push(
      await runOnce(
        {
          ...common,
          name: "cluster",
          // A restarted cluster node takes longer to rejoin, so faults come a little faster here
          // for the run to reach 20 of each kind as well.
          durationMs: envNumber("FAULTS_CLUSTER_MS", 120_000),
          faultIntervalMs: envNumber("FAULTS_CLUSTER_INTERVAL_MS", 1_200),
          seed: seed + 1,
        },
        mainJs,
      ),
    );
  }
  for (const report of reports) {
    for (const problem of report.problems) process.stdout.write(`[${report.name}] ${problem}\n`);
    for (const problem of report.schedules.problems) {
      process.stdout.write(`[${report.name}] schedule ${problem}\n`);
    }
    for (const v of report.history.violations) {
      process.stdout.write(`[${report.name}] history ${v.kind}: ${v.detail}\n`);
    }
  }
  process.stdout.write(`\n${table(reports)}\n\n`);
  const sum = (f: (r: RunReport) => number) => reports.reduce((n, r) => n + f(r), 0);
  const faults = Object.fromEntries(FAULT_KINDS.map((k) => [k, sum((r) => r.faults[k])]));
  const summary = {
    acknowledged: sum((r) => r.acknowledged),
    committed: sum((r) => r.committed),
    lost: sum((r) => r.lost),
    duplicated: sum((r) => r.duplicated),
    schedule_fires_missed: sum((r) => r.schedules.schedule_fires_missed),
    schedule_fires_duplicated: sum((r) => r.schedules.schedule_fires_duplicated),
    stale_commits: sum((r) => r.stale_commits),
    revision_gaps: sum((r) => r.revision_gaps),
    malformed_turns: sum((r) => r.malformed_turns),
    incomplete_streams: sum((r) => r.incomplete_streams),
    mismatched_revisions: sum((r) => r.mismatched_revisions),
    unknown_commits: sum((r) => r.unknown_commits),
    parked_turns: sum((r) => r.parked_turns),
    model_calls_repeated: sum((r) => r.model_calls_repeated),
    tools_reexecuted: sum((r) => r.tools_reexecuted),
    answers_accepted: sum((r) => r.answers_accepted),
    answers_lost: sum((r) => r.answers_lost),
    history_operations: sum((r) => r.history.operations),
    history_violations: sum((r) => r.history.violations.length + r.history.omitted),
    webhooks_undelivered: sum((r) => r.webhooks.webhooks_undelivered),
    webhooks_delivered: sum((r) => r.webhooks.delivered),
    webhooks_duplicates: sum((r) => r.webhooks.duplicates),
    webhooks_unverified: sum((r) => r.webhooks.unverified),
    faults,
    outage: reports.find((r) => r.outage)?.outage,
    quota_slot: Object.fromEntries(reports.map((r) => [r.name, r.quota_slot])),
    compaction_kills: sum((r) => r.compaction_kill.kills),
    compaction_half: sum((r) => r.compaction_kill.half),
    seed,
    seconds: Math.round((Date.now() - started) / 1000),
    client_idle_goaway_errors: idleGoawayRaces,
    runs: Object.fromEntries(
      reports.map((r) => {
        const { problems: _problems, name, ...figures } = r;
        return [name, figures];
      }),
    ),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

// The connect-node client (2.1.2) destroys a connection that receives GOAWAY with no open streams
// (a replica draining) with an error it raises later; if the connection manager has already moved
// on and dropped its listeners, that error surfaces as an uncaught exception unrelated to any call.
// Exactly that one is tolerated and counted; anything else uncaught still ends the suite.
let idleGoawayRaces = 0;
process.on("uncaughtException", (error) => {
  if (
    error instanceof ConnectError &&
    error.rawMessage === "received GOAWAY without any open streams"
  ) {
    idleGoawayRaces++;
    return;
  }
  process.stderr.write(`fault suite: uncaught ${error.stack ?? String(error)}\n`);
  killAll();
  process.exit(1);
});

// Bounded whatever happens: a run that hangs is a failure, not a stuck CI job.
const watchdog = setTimeout(
  () => {
    process.stderr.write("fault suite: watchdog expired\n");
    killAll();
    process.exit(3);
  },
  envNumber("FAULTS_WATCHDOG_MS", 14 * 60_000),
);
watchdog.unref();
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`fault suite failed: ${(error as Error).stack ?? String(error)}\n`);
    killAll();
    process.exit(1);
  },
);
