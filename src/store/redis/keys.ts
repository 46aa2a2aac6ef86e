// Every Redis key the store touches is built here and nowhere else (never inside Lua).
// All keys of one session share the hash tag `{<sessionId>}`, so a script that takes any of
// them runs in one slot and the store works unchanged on Redis Cluster.
import { invalidArgument } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";

export interface SessionKeys {
  /** Hash: tok, gen, exp, oid, inc, own (the current or last lease of the session). */
  lease: string;
  /** Lease generations; never deleted, and floored by the clock (ADR 0022): tokens never repeat. */
  generation: string;
  /** Hash: rev, turn and the usage totals. Absent before the first commit. */
  head: string;
  /** List of committed messages, oldest first. */
  messages: string;
  /** Hash of session metadata. */
  metadata: string;
  /** Hash: operation id -> JSON {h, rev} of the commit that recorded it. */
  stamps: string;
  /** Hash: work, input -> last sequence number issued. */
  sequences: string;
  /** Hash: batch id -> JSON of the batch without its payload. */
  work: string;
  /** Hash: batch id -> payload, kept apart so claims decode small records only. */
  workPayloads: string;
  /** Sorted set of ready and claimed batch ids, scored by enqueue sequence. */
  workIndex: string;
  /** Hash: source key -> "<content hash>:<batch id>". */
  workSources: string;
  /** Hash: input id -> JSON of the input without its payload. */
  inputs: string;
  inputPayloads: string;
  /** Sorted set of every input id (tombstones too, for suffix cancels), scored by sequence. */
  inputIndex: string;
  inputSources: string;
  /** Hash per turn: call id -> JSON state of a client tool call; expires (TOOL_CALL_RETENTION_MS). */
  toolCalls(turnId: string): string;
  /** Hash: the turn parked on outside answers (fields in parkTurn-5.lua), until its commit. */
  parked: string;
  /** List: "<message count>:<turn index>" per revision from the head's `hf` (lua/_history.lua). */
  history: string;
  /** List of JSON {r, n, a, l}: each rewind, oldest first. */
  rewinds: string;
  /** List of the messages rewinds took off the transcript, in the order they left. */
  archive: string;
  /** List of JSON {r, m}: each revision's metadata patch (a fork's first one: all of it). */
  metadataLog: string;
  /** Hash: event id -> JSON outbox row {e, a, d, t, k, l} (ADR 0021; webhook-ops.ts). */
  outbox: string;
  /** Hash: turn id -> JSON of its record (domain/turn-records.ts; lua/_turns.lua). */
  turnRecords: string;
  /** Sorted set: turn ids by creation number, the records' order and their bound. */
  turnOrder: string;
}

/** Braces in the namespace would change which part of a key Redis hashes. */
export function checkNamespace(namespace: string): string {
  if (namespace.length === 0 || /[{}\s]/u.test(namespace)) {
    throw invalidArgument("namespace", "must be non-empty, without braces or whitespace");
  }
  return namespace;
}

/**
 * The keys of one session, each built when an operation asks for it: an operation uses two to
 * twelve of them, so building all nineteen per call would be wasted work on the hot path.
 */
class LazySessionKeys implements SessionKeys {
  constructor(private readonly p: string) {}
  get lease() {
    return `${this.p}lease`;
  }
  get generation() {
    return `${this.p}gen`;
  }
  get head() {
    return `${this.p}head`;
  }
  get messages() {
    return `${this.p}messages`;
  }
  get metadata() {
    return `${this.p}metadata`;
  }
  get stamps() {
    return `${this.p}stamps`;
  }
  get sequences() {
    return `${this.p}seq`;
  }
  get work() {
    return `${this.p}work`;
  }
  get workPayloads() {
    return `${this.p}work:payloads`;
  }
  get workIndex() {
    return `${this.p}work:index`;
  }
  get workSources() {
    return `${this.p}work:sources`;
  }
  get inputs() {
    return `${this.p}inputs`;
  }
  get inputPayloads() {
    return `${this.p}inputs:payloads`;
  }
  get inputIndex() {
    return `${this.p}inputs:index`;
  }
  get inputSources() {
    return `${this.p}inputs:sources`;
  }
  toolCalls(turnId: string) {
    return `${this.p}tool-calls:${turnId}`;
  }
  get parked() {
    return `${this.p}parked`;
  }
  get history() {
    return `${this.p}history`;
  }
  get rewinds() {
    return `${this.p}rewinds`;
  }
  get archive() {
    return `${this.p}archive`;
  }
  get metadataLog() {
    return `${this.p}metadata:log`;
  }
  get outbox() {
    return `${this.p}webhooks:outbox`;
  }
  get turnRecords() {
    return `${this.p}turns`;
  }
  get turnOrder() {
    return `${this.p}turns:order`;
  }
}

export function sessionKeys(namespace: string, sessionId: SessionId): SessionKeys {
  return new LazySessionKeys(`${namespace}:{${sessionId}}:`);
}

/**
 * Sorted set (all scores 0, ordered by id) of sessions with a commit. It lives in its own slot,
 * is kept by separate commands after commits and deletes, and is a hint, never the truth.
 */
export function sessionIndexKey(namespace: string): string {
  return `${namespace}:sessions`;
}

/** Keys of a session's event log and turn signals; same hash tag as the session's state. */
export interface SessionEventKeys {
  /** Stream of events; entry ids are `<seq>-1`, so the id is the cursor. */
  events: string;
  /** Counter of event sequence numbers; survives trimming and deletes. */
  eventSeq: string;
  /** String: the running turn's id, with a TTL as long as the lease. */
  activeTurn: string;
  /** Pub/sub channel of the session's turn signals. */
  channel: string;
  /** String set when a cancel was requested, so a listener that subscribes late still sees it. */
  cancel(turnId: string): string;
  /** Hash: call id -> JSON result, kept until the turn ends. */
  toolResults(turnId: string): string;
}

export function sessionEventKeys(namespace: string, sessionId: SessionId): SessionEventKeys {
  const p = `${namespace}:{${sessionId}}:`;
  return {
    events: `${p}events`,
    eventSeq: `${p}events:seq`,
    activeTurn: `${p}turn`,
    channel: `${p}signals`,
    cancel: (turnId) => `${p}cancel:${turnId}`,
    toolResults: (turnId) => `${p}tool-results:${turnId}`,
  };
}

/** Keys of one agent; the hash tag `{agent:<id>}` keeps them in one slot. */
export interface AgentKeys {
  /** Hash: latest (version number), deleted (0 | 1). */
  head: string;
  /** Hash: version number -> JSON of that version. */
  versions: string;
}

export function agentKeys(namespace: string, agentId: string): AgentKeys {
  const p = `${namespace}:{agent:${agentId}}:`;
  return { head: `${p}head`, versions: `${p}versions` };
}

/**
 * Hash of one tenant's spend (ADR 0016): window ("total" or a UTC day) -> micros spent. Its own
 * hash tag `{budget:<tenant>}`, so a charge is one script in one slot, apart from any session.
 */
export function tenantSpendKey(namespace: string, tenant: string): string {
  return `${namespace}:{budget:${tenant}}`;
}

/** Sorted set (scores 0, by id) of live agents: a hint for listing, kept by separate commands. */
export function agentIndexKey(namespace: string): string {
  return `${namespace}:agents`;
}

/** Sorted set of sessions that may have work waiting; its own slot, a hint for the sweep. */
export function readyIndexKey(namespace: string): string {
  return `${namespace}:ready`;
}

/** Keys of one tenant's quota counters; the hash tag `{quota:<tenant>}` keeps them in one slot. */
export interface QuotaKeys {
  /** Sorted set: turn slot holder -> slot expiry (epoch ms by the Redis clock). */
  slots: string;
  /** Hash: tw/tc (turn minute window, turns), kw/kc (token minute window, tokens), dw/dc (day). */
  counters: string;
}

export function quotaKeys(namespace: string, tenant: string): QuotaKeys {
  const p = `${namespace}:{quota:${tenant}}:`;
  return { slots: `${p}slots`, counters: `${p}counters` };
}

/**
 * Set of the ids of one kind (sessions, agents, schedules) that hold a storage slot of a tenant
 * (ADR 0029); the tenant's quota hash tag, so each slot change is one script on one slot.
 */
export function storageSlotsKey(namespace: string, tenant: string, kind: string): string {
  return `${namespace}:{quota:${tenant}}:storage:${kind}`;
}

/**
 * String "<request hash>:<id>" of a tenant's Idempotency-Key for one kind of create (ADR 0037),
 * expiring; its own slot (tenants and creates contain no ':', so names never collide).
 */
export function idempotencyKeyKey(
  namespace: string,
  tenant: string,
  create: string,
  key: string,
): string {
  return `${namespace}:{idem:${tenant}:${create}}:${key}`;
}

/**
 * Keys of the schedules (ADR 0020): every schedule of every tenant, the due index and the runs
 * share the hash tag `{sched}`, so claiming an occurrence and settling it are each one script
 * on one slot, on Cluster too. The fire itself lands in the target session's slot.
 */
export interface ScheduleKeys {
  /** Sorted set: due-index member (scheduleDueMember) -> when it is next looked at (epoch ms). */
  due: string;
  /** Sorted set (scores 0, by id) of one tenant's schedule ids. */
  tenantIndex(tenant: string): string;
  /** Hash: one schedule (fields in lua/_schedule.lua). */
  schedule(tenant: string, scheduleId: string): string;
  /** List of run JSON, newest first. */
  runs(tenant: string, scheduleId: string): string;
}

export function scheduleKeys(namespace: string): ScheduleKeys {
  const p = `${namespace}:{sched}:`;
  // Tenant names hold no ':', so `<tenant>:<id>` never names two schedules.
  return {
    due: `${p}due`,
    tenantIndex: (tenant) => `${p}t:${tenant}`,
    schedule: (tenant, id) => `${p}s:${tenant}:${id}`,
    runs: (tenant, id) => `${p}r:${tenant}:${id}`,
  };
}

/** The due index names a schedule by tenant and id, unambiguously. */
export function scheduleDueMember(tenant: string, scheduleId: string): string {
  return JSON.stringify([tenant, scheduleId]);
}

/** Sorted set of outboxes (session ids) that may have due rows, scored by due ms: a hint. */
export function outboxIndexKey(namespace: string): string {
  return `${namespace}:webhooks:due`;
}

/** Keys of one tenant's webhook endpoints; the hash tag `{webhooks:<tenant>}` keeps them in one slot. */
export interface WebhookTenantKeys {
  /** Hash: endpoint id -> JSON of the endpoint. */
  endpoints: string;
  /** List per endpoint: JSON delivery attempts, newest first, capped. */
  deliveries(endpointId: string): string;
  /** Counter moved by every change of the tenant's endpoints (deliverers' cache check). */
  endpointsVersion: string;
}

export function webhookTenantKeys(namespace: string, tenant: string): WebhookTenantKeys {
  const p = `${namespace}:{webhooks:${tenant}}:`;
  return {
    endpoints: `${p}endpoints`,
    deliveries: (endpointId) => `${p}deliveries:${endpointId}`,
    endpointsVersion: `${p}endpoints-version`,
  };
}
