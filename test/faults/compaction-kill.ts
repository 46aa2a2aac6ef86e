// The compaction kill (ADR 0019), one bounded probe per run: a replica is SIGKILLed while its
// summary call is held at the model (a fake OpenAI-compatible server that leaves the call
// unanswered until the kill), twice: during an on-demand CompactSession, then during a turn's own
// compaction. After each kill a replica that is a fresh process reads the session: the transcript
// read before the kill is still its prefix, message for message; revisions run 1..head with no
// gap after the session's creation; the kill added either no compaction item or exactly one complete one (summary, provider,
// model, a covered range, fewer tokens after than before), never a partial one, never two. Then the
// killed turn's input is re-run there (it compacts again, now answered) and one more turn runs.
import { setMaxListeners } from "node:events";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SessionService } from "../../src/gen/tether/v1/session_service_pb.js";
import {
  TranscriptMessage_Role,
  type TranscriptMessage,
} from "../../src/gen/tether/v1/transcript_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { startFakeOpenAI } from "../support/fake-openai-server.js";
import { startRestartableCluster, startStandalone } from "./redis-servers.js";
import { createReplica, type Replica } from "./replicas.js";
import { sleep } from "../support/wait-for.js";

export interface CompactionKillReport {
  /** Replicas SIGKILLed while their summary call was held at the model. */
  kills: number;
  /** Reads after a kill that found the session half compacted or its history damaged: must be 0. */
  half: number;
  /** What the fresh replica read after each kill: the compaction wholly absent or wholly there. */
  after_kill: ("uncompacted" | "compacted")[];
  /** Compaction items at the end: the killed turn's, made again by its re-run. */
  compactions_final: number;
  /** Turns completed on the fresh replica after the kills (the re-run and the next one). */
  turns_after: number;
  problems: string[];
}

interface Snapshot {
  head: number;
  messages: TranscriptMessage[];
}

const text = (value: string) => [{ kind: { case: "text" as const, value } }];
/** Answers of 6,000 characters: eight turns pass the 8,000 tokens CompactSession keeps. */
const ANSWER_CHARS = 6_000;
const WARM_UP_TURNS = 8;
/** The killed turn's own policy: it compacts before its model call. */
const TURN_POLICY = { contextManagement: { triggerTokens: 2_000n, keepRecentTokens: 500n } };

const compactionOf = (m: TranscriptMessage) =>
  m.parts.find((p) => p.kind.case === "compaction")?.kind.value as
    | {
        coversThroughMessage: bigint;
        summary: string;
        provider: string;
        model: string;
        tokensBefore: bigint;
        tokensAfter: bigint;
      }
    | undefined;

/** A message as a string that changes with anything committed in it. */
const digest = (m: TranscriptMessage) =>
  JSON.stringify([
    m.role,
    String(m.revision),
    m.turnId,
    m.parts.map((p) => [
      p.kind.case,
      typeof p.kind.value === "string" ? p.kind.value : (compactionOf(m)?.summary ?? ""),
    ]),
  ]);

/** What is wrong with `after` read after a kill, given `before` read before it; and its kind. */
export function judge(
  before: Snapshot,
  after: Snapshot,
): { problems: string[]; kind: "uncompacted" | "compacted" } {
  const problems: string[] = [];
  before.messages.forEach((m, i) => {
    const now = after.messages[i];
    if (now === undefined || digest(now) !== digest(m)) {
      problems.push(`message ${i} changed or missing after the kill`);
    }
  });
  if (after.head !== before.head && after.head !== before.head + 1) {
    problems.push(`head ${after.head} after the kill, was ${before.head}`);
  }
  // Revision 1 created the session (no message); every later one committed at least one.
  const revisions = new Set(after.messages.map((m) => Number(m.revision)));
  for (let r = 2; r <= after.head; r++) {
    if (!revisions.has(r)) problems.push(`revision ${r} of ${after.head} has no message`);
  }
  if (after.messages.some((m) => Number(m.revision) > after.head || Number(m.revision) < 2)) {
    problems.push("a message outside revisions 2..head");
  }
  const items = (s: Snapshot) =>
    s.messages.filter((m) => m.role === TranscriptMessage_Role.COMPACTION);
  const added = items(after).length - items(before).length;
  if (added < 0 || added > 1) problems.push(`${added} compaction items added by one kill`);
  after.messages.forEach((m, i) => {
    if (m.role !== TranscriptMessage_Role.COMPACTION) return;
    const c = compactionOf(m);
    const covers = Number(c?.coversThroughMessage ?? 0n);
    if (
      c === undefined ||
      c.summary === "" ||
      c.provider === "" ||
      c.model === "" ||
      covers < 1 ||
      covers > i ||
      c.tokensAfter >= c.tokensBefore
    ) {
      problems.push(
        `compaction item ${i} incomplete: ${JSON.stringify(c, (_k, v: unknown) =>
          typeof v === "bigint" ? Number(v) : v,
        )}`,
      );
    }
  });
  return { problems, kind: added === 1 ? "compacted" : "uncompacted" };
}

export async function probeCompactionKill(options: {
  name: string;
  mainJs: string;
  env: Record<string, string>;
  leaseTtlMs: number;
  sweepIntervalMs: number;
}): Promise<CompactionKillReport> {
  const model = await startFakeOpenAI({
    contextLimit: Number.MAX_SAFE_INTEGER,
    answerChars: ANSWER_CHARS,
  });
  const env = {
    ...options.env,
    TETHER_PROVIDER: "openai",
    TETHER_OPENAI_API_KEY: "fault-suite",
    TETHER_OPENAI_BASE_URL: model.baseURL,
    TETHER_MODEL: "fake-window",
  };
  const report: CompactionKillReport = {
    kills: 0,
    half: 0,
    after_kill: [],
    compactions_final: -1,
    turns_after: 0,
    problems: [],
  };
  const victim = await createReplica({ ...options, index: 81, env });
  const fresh = await createReplica({ ...options, index: 82, env });
  const replicas: Replica[] = [victim, fresh];
  const abort = new AbortController();
  const bound = setTimeout(() => abort.abort(new Error("compaction probe timed out")), 60_000);
  const signal = abort.signal;
  // Every call of the probe listens on it: more than the default ten at a time.
  setMaxListeners(0, signal);
  const turns = (r: Replica) =>
    createClient(TurnService, createGrpcTransport({ baseUrl: r.address }));
  const sessions = (r: Replica) =>
    createClient(SessionService, createGrpcTransport({ baseUrl: r.address }));
  const sessionId = `compaction-probe-${options.name}-${Date.now()}`;

  /** One turn to turn_completed; true when it finished. */
  const turn = async (r: Replica, question: string): Promise<boolean> => {
    for await (const m of turns(r).streamTurn({ sessionId, input: text(question) }, { signal })) {
      if (m.event?.event.case === "turnCompleted") {
        return m.event.event.value.outcome?.kind.case === "finished";
      }
    }
    return false;
  };
  const read = async (r: Replica): Promise<Snapshot> => {
    const reply = await sessions(r).getSession({ sessionId, includeMessages: true }, { signal });
    return { head: Number(reply.session?.headRevision ?? 0n), messages: reply.transcript };
  };
  /** Judges a read; `afterKill` counts its kind and any problem as a half compaction. */
  const record = (before: Snapshot, after: Snapshot, what: string, afterKill: boolean) => {
    const verdict = judge(before, after);
    if (afterKill) report.after_kill.push(verdict.kind);
    if (afterKill && verdict.problems.length > 0) report.half++;
    report.problems.push(...verdict.problems.map((p) => `${what}: ${p}`));
    return verdict.kind;
  };
  /** Held at the model, then the replica is SIGKILLed mid-call. */
  const killDuringSummary = async (held: Promise<void>) => {
    // Generous: on a starved machine the call can take tens of seconds to reach the model.
    await Promise.race([
      held,
      sleep(90_000).then(() => Promise.reject(new Error("no summary call reached the model"))),
    ]);
    await victim.kill();
    report.kills++;
  };

  try {
    await victim.start();
    for (let i = 1; i <= WARM_UP_TURNS; i++) {
      if (!(await turn(victim, `Question ${i}: tell me about item ${i}.`))) {
        throw new Error(`warm-up turn ${i} did not finish`);
      }
    }
    let before = await read(victim);

    // On demand: CompactSession's summary call held, its replica killed.
    let held = model.holdNextSummary();
    // The last turn's commit released its lease in its own step, before its turn_completed
    // (ADR 0023), so the session is free now. The kill breaks the call: its error is expected.
    const onDemand = sessions(victim)
      .compactSession({ sessionId }, { signal })
      .catch(() => undefined);
    await killDuringSummary(held);
    await onDemand;
    await fresh.start();
    let after = await read(fresh);
    record(before, after, "CompactSession killed", true);
    before = after;

    // In a turn: the compaction before its model call held, its replica killed. The fresh replica
    // stops meanwhile (its sweep would otherwise take the turn and hold the summary itself), and
    // reads again as a new process after the kill.
    await fresh.shutdown();
    await victim.start();
    held = model.holdNextSummary();
    const killed = (async () => {
      const stream = turns(victim).streamTurn(
        { sessionId, input: text("Question 9: and now?"), options: TURN_POLICY },
        { signal },
      );
      for await (const _ of stream) {
        // read until the stream breaks with the replica
      }
    })().catch(() => undefined);
    await killDuringSummary(held);
    await killed;
    await fresh.start();
    after = await read(fresh);
    record(before, after, "turn's compaction killed", true);

    // The killed turn's input runs again on the fresh replica (its compaction answered now):
    // followed on the session's log until a turn_completed moves the head past the kill's.
    for await (const m of turns(fresh).watchSession({ sessionId, afterCursor: 0n }, { signal })) {
      const event = m.event?.event;
      if (event?.case === "turnCompleted" && Number(event.value.headRevision) > before.head) break;
    }
    after = await read(fresh);
    // The re-run compacts: its input carries the policy, and eight turns are over the trigger.
    if (record(before, after, "the killed turn re-run", false) !== "compacted") {
      report.problems.push("the killed turn's re-run committed no compaction");
    }
    const rerun = after.messages.filter((m) => Number(m.revision) === after.head);
    if (rerun.some((m) => m.role === TranscriptMessage_Role.ASSISTANT)) report.turns_after++;
    if (await turn(fresh, "Question 10: one more.")) report.turns_after++;
    const final = await read(fresh);
    record(after, final, "the next turn", false);
    report.compactions_final = final.messages.filter(
      (m) => m.role === TranscriptMessage_Role.COMPACTION,
    ).length;
    return report;
  } catch (error) {
    for (const r of replicas) process.stdout.write(`--- ${r.ownerId} (last lines)\n${r.tail()}\n`);
    throw error;
  } finally {
    clearTimeout(bound);
    abort.abort();
    await Promise.allSettled(replicas.map((r) => r.shutdown()));
    await model.close();
  }
}

/** FAULTS_KINDS=compaction_kill: this probe alone, on a fresh Redis per mode (no workload). */
export async function compactionKillOnly(modes: string[], mainJs: string): Promise<void> {
  const runs: Record<string, CompactionKillReport> = {};
  for (const name of modes) {
    const standalone = name === "standalone" ? await startStandalone() : undefined;
    const cluster = name === "cluster" ? await startRestartableCluster() : undefined;
    const env: Record<string, string> = standalone
      ? { TETHER_REDIS_URL: `redis://127.0.0.1:${standalone.port}` }
      : {
          TETHER_REDIS_CLUSTER_NODES: (cluster?.nodes ?? [])
            .map((n) => `127.0.0.1:${n.port}`)
            .join(","),
        };
    try {
      runs[name] = await probeCompactionKill({
        name,
        mainJs,
        env,
        leaseTtlMs: 1_000,
        sweepIntervalMs: 250,
      });
    } finally {
      await standalone?.stop();
      await cluster?.stop();
    }
  }
  process.stdout.write(`${JSON.stringify({ compaction_kill: runs })}\n`);
}
