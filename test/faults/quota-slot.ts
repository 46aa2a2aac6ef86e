// The quota slot kill (ADR 0015), one bounded probe per run: two replicas with a concurrency
// quota of one turn for the tenant. A turn on the first replica holds the slot (it waits for a
// client tool that is not answered yet) while a second session's input waits behind it on the
// second replica; the first replica is SIGKILLed. Its slot must come back within a lease TTL: its
// recorded expiry (Redis clock) is at most a TTL after the kill. On one host the survivor reclaims
// the dead holder's session at once and re-admits the same turn, which finds its own slot
// (`readmitted`: the holder is the turn, not the replica); otherwise the slot expires. Then both
// inputs must run (the held turn re-run by the survivor, its tool answered there), nothing lost.
import { createClient, type Client } from "@connectrpc/connect";
import type { Cluster, Redis } from "ioredis";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { TurnEvent } from "../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { createReplica, type LogRecord, type Replica } from "./replicas.js";
import { sleep } from "../support/wait-for.js";

export interface QuotaSlotReport {
  lease_ttl_ms: number;
  /** The slot was taken before the kill (the held turn waited for its tool). */
  slot_held: boolean;
  /** The dead replica's slot expiry (Redis clock) less the time of the SIGKILL: at most a TTL. */
  slot_expiry_after_kill_ms: number;
  /** From the SIGKILL to the survivor's first admission (the slot freed, or taken over). */
  kill_to_free_ms: number;
  /** The survivor re-admitted the held turn into its own slot (same holder, not counted twice). */
  held_turn_readmitted: boolean;
  /** Both inputs' turns completed after the kill. */
  turns_completed: number;
}

const LOOKUP = { name: "lookup", description: "answered by the probe", parametersJsonSchema: "{}" };
const text = (value: string) => [{ kind: { case: "text" as const, value } }];

/**
 * Reads a stream until turn_completed; answers each tool call of it on `answerOn`. `seen` gets
 * each event's kind, for the report of a probe that timed out.
 */
async function follow(
  stream: AsyncIterable<{ event?: TurnEvent }>,
  sessionId: string,
  answerOn: Client<typeof TurnService>,
  seen: string[],
  onWaiting?: () => void,
): Promise<boolean> {
  for await (const message of stream) {
    const event = message.event;
    seen.push(event?.event.case ?? "none");
    if (event?.event.case === "toolCallRequested") {
      if (onWaiting) {
        onWaiting();
        return false;
      }
      await answerOn.submitToolResults({
        sessionId,
        turnId: event.turnId,
        results: [{ callId: event.event.value.callId, output: "answered", isError: false }],
      });
    }
    if (event?.event.case === "turnCompleted") return true;
  }
  return false;
}

function firstAdmissionAfter(records: LogRecord[], sinceMs: number): number | undefined {
  const admitted = records.filter(
    (r) => r.msg === "quota admission" && r.kind === "admitted" && Number(r.time) >= sinceMs,
  );
  return admitted.length === 0 ? undefined : Math.min(...admitted.map((r) => Number(r.time)));
}

export async function probeQuotaSlotKill(options: {
  name: string;
  mainJs: string;
  env: Record<string, string>;
  leaseTtlMs: number;
  sweepIntervalMs: number;
  /** The run's Redis, to read the slot's expiry where the store keeps it. */
  redis: Redis | Cluster;
}): Promise<QuotaSlotReport> {
  const env = {
    ...options.env,
    TETHER_QUOTAS: JSON.stringify({ default: { concurrent_turns: 1 } }),
    // The held turn waits for its tool without parking: it keeps its slot until the kill.
    TETHER_PARK_AFTER_MS: "600000",
    TETHER_CLIENT_TOOL_TIMEOUT_MS: "600000",
  };
  const replicas: Replica[] = [];
  for (const index of [91, 92]) {
    const replica = await createReplica({ ...options, index, env });
    await replica.start();
    replicas.push(replica);
  }
  const [holder, survivor] = replicas as [Replica, Replica];
  const turns = (r: Replica) =>
    createClient(TurnService, createGrpcTransport({ baseUrl: r.address }));
  const report: QuotaSlotReport = {
    lease_ttl_ms: options.leaseTtlMs,
    slot_held: false,
    slot_expiry_after_kill_ms: -1,
    kill_to_free_ms: -1,
    held_turn_readmitted: false,
    turns_completed: 0,
  };
  const held = `quota-probe-${options.name}-held-${Date.now()}`;
  const queued = `quota-probe-${options.name}-queued-${Date.now()}`;
  const abort = new AbortController();
  // Where the probe is and what each stream showed: a timeout says both, and the replicas' last
  // output, so that a hang explains itself.
  let stage = "the held turn asks for its tool on the holder";
  let stalledAt = stage;
  const seen = { held: [] as string[], queued: [] as string[], heldAfterKill: [] as string[] };
  // A bound for a hang, not a speed check: generous enough for a loaded 2-core machine.
  const bound = setTimeout(() => {
    stalledAt = stage;
    abort.abort(new Error("quota probe timed out"));
  }, 90_000);
  try {
    await follow(
      turns(holder).streamTurn(
        { sessionId: held, input: text(`/tool lookup {}`), clientTools: [LOOKUP] },
        { signal: abort.signal },
      ),
      held,
      turns(holder),
      seen.held,
      () => (report.slot_held = true),
    );
    stage = "the queued input waits behind the held slot";
    const queuedTurn = follow(
      turns(survivor).streamTurn(
        { sessionId: queued, input: text("say queued") },
        { signal: abort.signal },
      ),
      queued,
      turns(survivor),
      seen.queued,
    );
    // Awaited with the held turn below; until then a timeout's rejection is not unhandled.
    queuedTurn.catch(() => undefined);
    // Let the queued input be refused at least once while the slot is held.
    await sleep(options.sweepIntervalMs * 2);
    const killedAt = Date.now();
    stage = "the holder is killed and the slot's expiry read";
    await holder.kill();
    // The replicas run in the default namespace; the tenant is `default` (no API keys).
    const slots = await options.redis.zrange(
      "tether:{quota:default}:slots",
      "0",
      "-1",
      "WITHSCORES",
    );
    const expiries = slots.filter((_, i) => i % 2 === 1).map(Number);
    if (expiries.length > 0) report.slot_expiry_after_kill_ms = Math.max(...expiries) - killedAt;
    // The held session's input is re-run by the survivor once the dead lease expires.
    stage = "both turns complete on the survivor";
    const heldTurn = follow(
      turns(survivor).watchSession(
        { sessionId: held, afterCursor: 0n, untilTurnCompleted: true },
        { signal: abort.signal },
      ),
      held,
      turns(survivor),
      seen.heldAfterKill,
    );
    const done = await Promise.all([queuedTurn, heldTurn]);
    report.turns_completed = done.filter(Boolean).length;
    const freedAt = firstAdmissionAfter(survivor.records(), killedAt);
    if (freedAt !== undefined) report.kill_to_free_ms = freedAt - killedAt;
    report.held_turn_readmitted = survivor
      .records()
      .some(
        (r) =>
          r.msg === "quota admission" && r.sessionId === `default:${held}` && r.readmitted === true,
      );
    return report;
  } catch (error) {
    if (!abort.signal.aborted) throw error;
    // Short enough that the suite's failure report (its last 60 lines) shows all of it.
    const lastLines = (r: Replica) =>
      r
        .tail()
        .split("\n")
        .slice(-12)
        .map((line) => line.slice(0, 300))
        .join("\n");
    const tails = replicas.map((r) => `--- ${r.ownerId}:\n${lastLines(r)}`).join("\n");
    throw new Error(
      `quota probe timed out at: ${stalledAt}; events seen: ${JSON.stringify(seen)}\n${tails}`,
      { cause: error },
    );
  } finally {
    clearTimeout(bound);
    abort.abort();
    await Promise.allSettled(replicas.map((r) => r.shutdown()));
  }
}
