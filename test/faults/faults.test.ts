// Runs the fault-injection suite (test/faults/run.ts) as its own process and holds its verdict,
// the JSON object on its last line, to the bar: nothing acknowledged lost or committed twice, no
// commit from a superseded lease, no revision gap, no turn committed cut short, every stream
// completed, every replica refusing turns while Redis is down and serving after, at least 20
// injected faults of each of a run's kinds in each run — standalone (replica kill, pause,
// restart, Redis restart), Cluster with a replica per master in `replicated` durability (those
// and primary failover and partition), Sentinel in `replicated` durability (replica faults,
// primary failover, partition) — and no violation in any run's client history
// (history/check.ts: loss, duplicates, real-time order, rolled-back and stale reads, fencing
// tokens going back). Each run heals its topology before verifying; a Sentinel left with no
// promotable replica on a starved machine is a reported finding, not a failure. The same failover workload in `async` durability is reported apart
// (`async_mode`): present, with its faults and what it lost, not held to zero. One run, no retry.
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import type { AuditReport, DoorFigures } from "./audit.js";
import type { HistoryCheckReport } from "./history/check.js";
import type { OutageReport } from "./outage.js";
import type { QuotaSlotReport } from "./quota-slot.js";
import type { CompactionKillReport } from "./compaction-kill.js";
import type { ScheduleShare } from "./schedules.js";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The summary line run.ts prints: the audit's totals over both runs, plus faults and outage. */
interface Verdict extends Pick<
  AuditReport,
  | "acknowledged"
  | "committed"
  | "lost"
  | "duplicated"
  | "stale_commits"
  | "revision_gaps"
  | "malformed_turns"
  | "incomplete_streams"
  | "mismatched_revisions"
  | "unknown_commits"
  | "parked_turns"
  | "model_calls_repeated"
  | "tools_reexecuted"
  | "answers_accepted"
  | "answers_lost"
> {
  faults: Record<string, number>;
  /** The front door's clients' share of the totals (door-clients.ts). */
  door: DoorFigures & { posts: number; streams: number };
  history_violations: number;
  schedule_fires_missed: number;
  schedule_fires_duplicated: number;
  /** The schedules split by how they were made: over gRPC, or as automations through the door. */
  schedules: { grpc: ScheduleShare; door: ScheduleShare };
  /** Committed turns whose webhook never arrived (ADR 0021); and the figures around it. */
  webhooks_undelivered: number;
  webhooks_delivered: number;
  webhooks_duplicates: number;
  webhooks_unverified: number;
  runs: Record<
    string,
    {
      faults: Record<string, number>;
      durability: string;
      acknowledged: number;
      history: HistoryCheckReport;
      compaction_kill?: CompactionKillReport;
      fault_details: { partition_connections_frozen: number };
    }
  >;
  /** The failover workload in `async` durability (the Cluster's): what it lost, reported. */
  async_mode?: {
    durability: string;
    faults: Record<string, number>;
    acknowledged: number;
    committed: number;
    lost: number;
    duplicated: number;
    stale_commits: number;
    history_operations: number;
    history_violations: number;
  };
  outage?: OutageReport;
  quota_slot: Record<string, QuotaSlotReport>;
  /** Replicas killed during a compaction's summary call, and reads that found it half done. */
  compaction_kills: number;
  compaction_half: number;
  /** Findings about the environment (a Sentinel with no good replica, diagnosed and healed). */
  findings: string[];
  /** Each run's heal before its verification, in ms. */
  heal_ms: Record<string, number>;
  verification_retries: number;
}

function runSuite(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(
      process.execPath,
      [join(repo, "node_modules/tsx/dist/cli.mjs"), "test/faults/run.ts"],
      {
        cwd: repo,
        env: process.env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (b: Buffer) => (output += b.toString()));
    child.stderr.on("data", (b: Buffer) => (output += b.toString()));
    child.on("exit", (code) => resolveRun({ code, output }));
  });
}

/** The fault kinds each run must inject at least 20 times. */
const RUN_KINDS: Record<string, string[]> = {
  standalone: ["replica_kill", "replica_pause", "replica_restart", "redis_restart"],
  cluster: [
    "replica_kill",
    "replica_pause",
    "replica_restart",
    "redis_restart",
    "primary_failover",
    "partition",
  ],
  sentinel: ["replica_kill", "replica_pause", "replica_restart", "primary_failover", "partition"],
};

it("survives replica kills, pauses, restarts, partitions, Redis restarts and primary failovers without losing or repeating input", async () => {
  const { code, output } = await runSuite();
  // The whole output, for the post-mortem of a run that failed (the assertion quotes its end).
  await writeFile(join(repo, ".tmp/faults/suite-output.log"), output);
  const lines = output.trim().split("\n");
  expect(code, lines.slice(-60).join("\n")).toBe(0);
  const verdict = JSON.parse(lines.at(-1) ?? "{}") as Verdict;
  // The table and the verdict belong in the CI log, pass or fail.
  process.stdout.write(
    `${lines
      .filter((l) => !l.startsWith('{"level"'))
      .slice(-28)
      .join("\n")}\n`,
  );
  // The first problems the audit noted (they explain the later ones), then the table and verdict.
  const problems = lines.filter((l) =>
    /^\[(standalone|cluster|sentinel|cluster-async)\] (?!starting|\d+s )/u.test(l),
  );
  const summary = [...problems.slice(0, 12), ...lines.slice(-40)].join("\n");
  // Every run healed its topology before verifying. What the environment did (a Sentinel that
  // found no replica to promote on a starved machine) is a finding, printed with Sentinel's view,
  // not a failure; the violations below still fail the run whatever the findings.
  for (const run of ["standalone", "cluster", "sentinel", "cluster-async"]) {
    expect(verdict.heal_ms[run], `${run}\n${summary}`).toBeGreaterThanOrEqual(0);
  }
  for (const finding of verdict.findings) {
    process.stdout.write(`finding (environment): ${finding}\n`);
    expect(finding, summary).toMatch(/^\[[a-z-]+\] no promotable replica /u);
  }
  expect(verdict.acknowledged, summary).toBeGreaterThan(100);
  expect(verdict.committed, summary).toBeGreaterThanOrEqual(verdict.acknowledged);
  expect(verdict.lost, summary).toBe(0);
  expect(verdict.duplicated, summary).toBe(0);
  // Some clients submit through the front door (POST …/events under an Idempotency-Key, the turn
  // followed on its SSE, resumed with ?after= elsewhere): counted in the totals above alike, and
  // each of their acknowledged inputs (a 202) committed exactly once and its turn's end seen.
  expect(verdict.door.acknowledged, summary).toBeGreaterThan(20);
  expect(verdict.door, summary).toMatchObject({ lost: 0, duplicated: 0, incomplete: 0 });
  expect(verdict.stale_commits, summary).toBe(0);
  expect(verdict.revision_gaps, summary).toBe(0);
  expect(verdict.malformed_turns, summary).toBe(0);
  expect(verdict.incomplete_streams, summary).toBe(0);
  expect(verdict.mismatched_revisions, summary).toBe(0);
  expect(verdict.unknown_commits, summary).toBe(0);
  // Turns that park on client tools and approvals, answered late through random replicas.
  expect(verdict.parked_turns, summary).toBeGreaterThan(20);
  expect(verdict.model_calls_repeated, summary).toBe(0);
  expect(verdict.tools_reexecuted, summary).toBe(0);
  expect(verdict.answers_accepted, summary).toBeGreaterThan(20);
  expect(verdict.answers_lost, summary).toBe(0);
  // Every one-off schedule due during the faults fired exactly once (ADR 0020).
  expect(verdict.schedule_fires_missed, summary).toBe(0);
  expect(verdict.schedule_fires_duplicated, summary).toBe(0);
  // A share of them are once automations made through the front door (POST /v1/agents/automations
  // under an Idempotency-Key, `run_at` in whole seconds): each fired exactly once at its instant,
  // one scheduled invocation and one input in its session, as the gRPC ones.
  expect(verdict.schedules.door.due, summary).toBeGreaterThanOrEqual(10);
  expect(verdict.schedules.grpc.due, summary).toBeGreaterThanOrEqual(10);
  expect(verdict.schedules.door, summary).toMatchObject({ missed: 0, duplicated: 0 });
  expect(verdict.schedules.grpc, summary).toMatchObject({ missed: 0, duplicated: 0 });
  // The totals above cover these three runs; the Cluster and Sentinel runs acknowledge only what
  // reached their replicas (MIN_REPLICAS equal to the replicas per primary, ADR 0017).
  expect(Object.keys(verdict.runs).sort()).toEqual(["cluster", "sentinel", "standalone"]);
  expect(verdict.runs.cluster?.durability).toBe("replicated");
  expect(verdict.runs.sentinel?.durability).toBe("replicated");
  for (const [name, kinds] of Object.entries(RUN_KINDS)) {
    for (const kind of kinds) {
      expect(
        verdict.runs[name]?.faults[kind],
        `${name} ${kind}\n${summary}`,
      ).toBeGreaterThanOrEqual(20);
    }
  }
  for (const kind of ["primary_failover", "partition"]) {
    expect(verdict.faults[kind], `${kind}\n${summary}`).toBeGreaterThanOrEqual(20);
  }
  // A partition freezes the replica's open Redis connections (and those it opens meanwhile).
  for (const name of ["cluster", "sentinel"]) {
    expect(
      verdict.runs[name]?.fault_details.partition_connections_frozen,
      `${name}\n${summary}`,
    ).toBeGreaterThanOrEqual(20);
  }
  // The failover workload again in `async` durability: there, with its counts, not held to 0.
  const asyncMode = verdict.async_mode;
  expect(asyncMode, summary).toBeDefined();
  expect(asyncMode?.durability).toBe("async");
  expect(asyncMode?.faults.primary_failover, summary).toBeGreaterThanOrEqual(10);
  expect(asyncMode?.faults.partition, summary).toBeGreaterThanOrEqual(10);
  expect(asyncMode?.acknowledged, summary).toBeGreaterThan(20);
  expect(asyncMode?.history_operations, summary).toBeGreaterThan(100);
  for (const figure of ["lost", "duplicated", "stale_commits", "history_violations"] as const) {
    expect(asyncMode?.[figure], `${figure}\n${summary}`).toBeGreaterThanOrEqual(0);
  }
  // A replica killed while it holds its tenant's only concurrency slot gives the slot back
  // within a lease TTL (its recorded expiry), and both inputs then run on the survivor.
  for (const [name, probe] of Object.entries(verdict.quota_slot)) {
    expect(probe.slot_held, `${name}\n${summary}`).toBe(true);
    expect(probe.slot_expiry_after_kill_ms, `${name}\n${summary}`).toBeGreaterThan(0);
    expect(probe.slot_expiry_after_kill_ms, `${name}\n${summary}`).toBeLessThanOrEqual(
      probe.lease_ttl_ms,
    );
    expect(probe.kill_to_free_ms, `${name}\n${summary}`).toBeGreaterThan(0);
    // Freed by expiry, or taken over at once by the re-run of the same turn; never held on.
    expect(probe.kill_to_free_ms, `${name}\n${summary}`).toBeLessThanOrEqual(
      3 * probe.lease_ttl_ms,
    );
    expect(probe.turns_completed, `${name}\n${summary}`).toBe(2);
  }
  // A replica killed during a compaction's summary call (on demand, then in a turn) leaves the
  // session uncompacted or with one complete compaction, never half (ADR 0019); the killed
  // turn's re-run compacts and the next turn runs, on a fresh replica.
  expect(verdict.compaction_kills, summary).toBe(4);
  expect(verdict.compaction_half, summary).toBe(0);
  for (const name of ["standalone", "cluster"]) {
    expect(verdict.runs[name]?.compaction_kill, `${name}\n${summary}`).toMatchObject({
      kills: 2,
      half: 0,
      compactions_final: 1,
      turns_after: 2,
      problems: [],
    });
  }
  // Every client operation of each run, checked against the sessions read back at the end.
  expect(verdict.history_violations, summary).toBe(0);
  // Every committed turn's event delivered, also when its replica was killed between the commit
  // and the hint's note (ADR 0021 "The hint").
  expect(verdict.webhooks_undelivered, summary).toBe(0);
  expect(verdict.webhooks_unverified, summary).toBe(0);
  expect(verdict.webhooks_delivered, summary).toBeGreaterThan(100);
  for (const [name, run] of Object.entries(verdict.runs)) {
    expect(run.history.violations, `${name}\n${summary}`).toEqual([]);
    expect(run.history.omitted, name).toBe(0);
    expect(run.history.inputs.acknowledged, name).toBeGreaterThan(50);
    expect(run.history.outcomes.read.ok, name).toBeGreaterThan(50);
    expect(run.history.outcomes.await.ok, name).toBeGreaterThan(50);
  }
  // A long Redis outage: every replica NOT_SERVING and refusing with UNAVAILABLE while it lasts,
  // serving and running turns again after it, without a restart.
  expect(verdict.outage?.refusals, summary).toEqual(["Unavailable", "Unavailable", "Unavailable"]);
  expect(verdict.outage, summary).toMatchObject({
    replicas: 3,
    not_serving_while_down: 3,
    unavailable_while_down: 3,
    serving_after: 3,
    turn_after: 3,
  });
});
