// Durability modes of the Redis store (ADR 0017). `async`: an operation is acknowledged once the
// primary ran its script. `replicated`: a script that acknowledges something to a client, or
// fences other writers, is followed by WAIT on the same connection, and the acknowledgement is
// returned only once enough replicas confirmed it; otherwise the call fails retryable.
import { replicationUnconfirmed } from "../../domain/errors.js";
import type { Cluster, Redis } from "ioredis";
import { markAndWait, type ScriptName, type ScriptRunner } from "./scripts.js";

export type RedisDurability =
  | { mode: "async" }
  | {
      mode: "replicated";
      /** Replicas that must confirm a write before it is acknowledged (WAIT numreplicas). */
      minReplicas: number;
      /** How long WAIT may block; past it the call fails replication_unconfirmed. */
      timeoutMs: number;
    };

export const ASYNC_DURABILITY: RedisDurability = { mode: "async" };

/**
 * - `acknowledging`: its effect is promised to a client (a submission, a commit, an answer) or
 *   keeps other writers out (a lease or claim): losing it in a failover would break a promise.
 *   Renewals too (ADR 0022): not because losing one harms (the lease only expires sooner), but
 *   because a holder whose renewal no replica confirms may be on an old primary cut off from
 *   them, and must stop before a promoted replica lets another holder in.
 * - `internal`: a write whose loss a failover survives by design: a release (the lease stays
 *   until it expires), vacuum, the event log's tail (rebuilt from commits; ADR 0017 says what a
 *   client may see), a listener's mark, quota slots and counters.
 * - `read`: writes nothing, and shows what was acknowledged to clients (a session, its inputs,
 *   lease, tool calls, parked turn and history; an agent). In `replicated` mode it answers only
 *   once the replicas hold everything it saw: a commit is in the primary before its WAIT
 *   confirms it, and a read that showed it before a failover discarded it would show a history
 *   that is later taken back (a revision seen, then gone).
 * - `internal-read`: writes nothing, and reads what is never waited for (the event log, ADR
 *   0017; quota and spend counters; the due indexes): it answers at once in either mode.
 */
export type ScriptWriteClass = "acknowledging" | "internal" | "read" | "internal-read";

/** Every script, classified: a new script does not compile until it is listed here. */
export const SCRIPT_WRITE_CLASS = {
  claimLease: "acknowledging",
  reclaimLease: "acknowledging",
  renewLease: "acknowledging",
  renewLeases: "acknowledging",
  releaseLease: "internal",
  releaseIfIdle: "internal",
  readLease: "read",
  enqueueWork: "acknowledging",
  listWork: "read",
  cancelWork: "acknowledging",
  claimReadyWork: "acknowledging",
  claimWorkByIds: "acknowledging",
  submitInput: "acknowledging",
  startTurn: "acknowledging",
  listInputs: "read",
  cancelInputs: "acknowledging",
  claimInputs: "acknowledging",
  deferActiveInputs: "acknowledging",
  commit: "acknowledging",
  loadSession: "read",
  readSessionSummary: "read",
  deleteSession: "acknowledging",
  vacuum: "internal",
  appendEvents: "internal",
  recordToolCalls: "acknowledging",
  answerToolCalls: "acknowledging",
  closeToolCalls: "acknowledging",
  readToolCalls: "read",
  parkTurn: "acknowledging",
  resumeTurn: "acknowledging",
  cancelParkedTurn: "acknowledging",
  readParkedTurn: "read",
  readTurns: "read",
  readTurn: "read",
  createAgent: "acknowledging",
  updateAgent: "acknowledging",
  getAgent: "read",
  deleteAgent: "acknowledging",
  readRevision: "read",
  rewindSession: "acknowledging",
  forkSession: "acknowledging",
  listenTurn: "internal",
  unlistenTurn: "internal",
  readEvents: "internal-read",
  // Quota slots and counters (ADR 0015) bound a tenant's use; a failover that loses one lets a
  // tenant briefly past its limit, and promises nothing to a client, so no turn waits on them.
  admitTurn: "internal",
  chargeTokens: "internal",
  checkTokenQuota: "internal-read",
  releaseTurnSlot: "internal",
  renewTurnSlots: "internal",
  readQuotaUsage: "internal-read",
  // Storage slots (ADR 0029) are taken before the acknowledged create they admit; a lost one
  // lets a tenant past its limit by what the failover lost, and promises nothing to a client.
  takeStorageSlot: "internal",
  releaseStorageSlot: "internal",
  countStorageSlots: "internal-read",
  // A tenant's spend (ADR 0016) is a counter of the same kind: a lost charge lets the tenant
  // spend a little more, and no client is promised it.
  chargeTenantSpend: "internal",
  // Schedules (ADR 0020): what a client sets is acknowledged; a fire's claim and its completion
  // are not, because a lost one only fires the same occurrence again, into the session's
  // submitInput (acknowledging itself) under the same source key, which takes it once.
  createSchedule: "acknowledging",
  updateSchedule: "acknowledging",
  deleteSchedule: "acknowledging",
  pauseSchedule: "acknowledging",
  unpauseSchedule: "acknowledging",
  runScheduleNow: "acknowledging",
  readDueSchedules: "internal-read",
  claimScheduleFire: "internal",
  completeScheduleFire: "internal",
  // Webhooks (ADR 0021): endpoints are what a client sets. An outbox row rides in the commit or
  // park that writes it (and waits with it); a lost claim, settle or delivery record only
  // delivers an event again, which at-least-once allows.
  createWebhookEndpoint: "acknowledging",
  updateWebhookEndpoint: "acknowledging",
  deleteWebhookEndpoint: "acknowledging",
  readWebhookEndpoints: "read",
  readWebhookEndpointsSince: "read",
  listWebhookDeliveries: "internal-read",
  enqueueWebhookEvent: "internal",
  claimOutbox: "internal",
  settleOutbox: "internal",
  settleOutboxBatch: "internal",
  // The due-outbox hint: a lost one is found again by the rows' own expect or note (ADR 0021).
  expectOutbox: "internal",
  settleOutboxHint: "internal",
  recordWebhookDelivery: "internal",
  // An Idempotency-Key (ADR 0037) names the id of the create it protects: lost in a failover, a
  // retry would name another id and make a second object, so it is confirmed like the create.
  claimIdempotencyKey: "acknowledging",
} as const satisfies Record<ScriptName, ScriptWriteClass>;

export const ACKNOWLEDGING_SCRIPTS = (Object.keys(SCRIPT_WRITE_CLASS) as ScriptName[]).filter(
  (name) => SCRIPT_WRITE_CLASS[name] === "acknowledging",
);

/**
 * The store's write seam under a durability mode: every acknowledging script runs with WAIT
 * behind it; too few confirmations fail the call as `replication_unconfirmed` (UNAVAILABLE).
 * The script did run on the primary: a retry with the same idempotency key (a commit stamp, a
 * source key, the same owner re-entering its lease) answers from it instead of applying twice.
 */
export function withDurability(runner: ScriptRunner, durability: RedisDurability): ScriptRunner {
  if (durability.mode === "async") return runner;
  const wait = { replicas: durability.minReplicas, timeoutMs: durability.timeoutMs };
  return {
    run: async (name, keys, args) => {
      const kind = SCRIPT_WRITE_CLASS[name];
      if (kind !== "acknowledging" && kind !== "read") return runner.run(name, keys, args);
      const marked = kind === "read" ? { ...wait, mark: readMarkKey(keys[0] ?? "") } : wait;
      const { reply, replicas } = await runner.runAndWait(name, keys, args, marked);
      if (replicas < wait.replicas) {
        throw replicationUnconfirmed(
          wait.replicas,
          replicas,
          wait.timeoutMs,
          kind === "read" ? "read" : "write",
        );
      }
      return reply;
    },
    runAndWait: (name, keys, args, w) => runner.runAndWait(name, keys, args, w),
  };
}

/**
 * The key a confirmed read writes (ReplicaWait.mark): in the slot of the read's first key, so on
 * a Cluster it goes to the node that ran the read. A key with a hash tag keeps its tag; a key
 * without one becomes the tag, which hashes to the same slot as the key itself.
 */
export function readMarkKey(key: string): string {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? `${key.slice(0, close + 1)}:read-mark` : `{${key}}:read-mark`;
}

/**
 * A read made outside the script runner (the event log's pages and blocking reads) confirmed as
 * a `read` script is: in `replicated` mode, resolves once the replicas hold everything read so
 * far from the slot of `key`, else fails replication_unconfirmed; in `async` mode, at once.
 */
export async function confirmRead(
  redis: Redis | Cluster,
  durability: RedisDurability,
  key: string,
): Promise<void> {
  if (durability.mode === "async") return;
  const { minReplicas, timeoutMs } = durability;
  const replicas = await markAndWait(redis, {
    replicas: minReplicas,
    timeoutMs,
    mark: readMarkKey(key),
  });
  if (replicas < minReplicas)
    throw replicationUnconfirmed(minReplicas, replicas, timeoutMs, "read");
}
