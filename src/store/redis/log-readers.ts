// The replica's blocking readers of the event log: a bounded set of connections, each running one
// XREAD BLOCK for many watched streams at once and handing each waiter what arrived for it, so
// the number of Redis connections does not grow with the number of watches (ADR 0028).
import type { Cluster, Redis } from "ioredis";
import { readerConnection } from "./connections.js";

export type RawEntry = [id: string, fields: string[]];

export interface LogReadersOptions {
  redis: Redis | Cluster;
  /** Most connections the readers hold; every blocking read of the replica shares them. */
  maxReaders: number;
  /** How long one XREAD blocks when no other group of streams waits for a reader. */
  blockMs?: number;
  /** How long it blocks while other groups wait for a reader (they take turns). */
  sliceMs?: number;
}

export interface LogWait {
  key: string;
  afterSeq: number;
  limit: number;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface LogReaders {
  /**
   * Entries of `key` after `afterSeq` (at most `limit`) once some arrive; [] when the wait timed
   * out with its stream read; undefined when it was never read (every reader busy elsewhere),
   * failed, or was aborted: the caller then reads the log itself.
   */
  wait(wait: LogWait): Promise<RawEntry[] | undefined>;
  /** Connections held now (for tests and the bound's check). */
  connections(): number;
  close(): void;
}

interface Waiter {
  key: string;
  afterSeq: number;
  limit: number;
  /** Its stream was in an XREAD from its `afterSeq` or earlier. */
  read: boolean;
  settle(entries: RawEntry[] | undefined): void;
}

/** Streams read together: one XREAD may name several keys only within one cluster slot. */
interface Group {
  id: string;
  waiters: Map<string, Set<Waiter>>;
  reader: Reader | undefined;
}

interface Reader {
  conn: Redis | Cluster;
  clientId: Promise<number | undefined> | undefined;
  group: Group | undefined;
  /** The XREAD under way: each stream's id, and a number telling one XREAD from the next. */
  inFlight: Map<string, number> | undefined;
  issue: number;
  /** Settles the XREAD under way as if it ended (a cluster connection cannot be unblocked). */
  interrupt: (() => void) | undefined;
}

const seqOf = (id: string): number => Number(id.split("-")[0]);

/** A cheap stable string hash, to spread a standalone server's streams over the readers. */
function spread(key: string, buckets: number): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return Math.abs(h) % buckets;
}

/** The hash tag of a key (the text between its first `{` and the next `}`), else the key. */
function hashTag(key: string): string {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** The readers' shared state: the groups that wait, the readers held, and whether it is closed. */
interface Pool {
  redis: Redis | Cluster;
  cluster: boolean;
  maxReaders: number;
  blockMs: number;
  sliceMs: number;
  groups: Map<string, Group>;
  /** Groups with waiters and no reader, oldest first. */
  queue: Group[];
  readers: Reader[];
  closed: boolean;
}

export function createLogReaders(options: LogReadersOptions): LogReaders {
  const pool: Pool = {
    redis: options.redis,
    cluster: options.redis.isCluster,
    maxReaders: Math.max(1, options.maxReaders),
    blockMs: options.blockMs ?? 5_000,
    sliceMs: options.sliceMs ?? 100,
    groups: new Map(),
    queue: [],
    readers: [],
    closed: false,
  };
  return {
    wait(wait) {
      if (pool.closed || wait.signal.aborted) return Promise.resolve(undefined);
      return new Promise((resolve) => addWaiter(pool, wait, resolve));
    },
    connections: () => pool.readers.length,
    close() {
      pool.closed = true;
      for (const group of [...pool.groups.values()]) fail(pool, group);
      pool.groups.clear();
      pool.queue.length = 0;
      for (const reader of pool.readers) {
        reader.interrupt?.();
        reader.conn.disconnect();
      }
      pool.readers.length = 0;
    },
  };
}

// On a standalone server every stream can share an XREAD: the keys are spread over the readers
// so that one read names fewer of them. On a cluster they must share a slot: a session's keys do.
const groupIdOf = (pool: Pool, key: string): string =>
  pool.cluster ? hashTag(key) : String(spread(key, pool.maxReaders));

function addWaiter(
  pool: Pool,
  { key, afterSeq, limit, timeoutMs, signal }: LogWait,
  resolve: (entries: RawEntry[] | undefined) => void,
): void {
  const id = groupIdOf(pool, key);
  let group = pool.groups.get(id);
  if (!group) {
    group = { id, waiters: new Map(), reader: undefined };
    pool.groups.set(id, group);
  }
  const home = group;
  let settled = false;
  const waiter: Waiter = {
    key,
    afterSeq,
    limit: Math.max(1, limit),
    read: false,
    settle(entries) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(entries);
    },
  };
  // Ending a wait needs nothing of the reader: what it brings for this key later is dropped.
  const end = (entries: RawEntry[] | undefined): void => {
    remove(pool, home, waiter);
    waiter.settle(entries);
  };
  const onAbort = (): void => end(undefined);
  const timer = setTimeout(() => end(waiter.read ? [] : undefined), Math.max(1, timeoutMs));
  signal.addEventListener("abort", onAbort, { once: true });
  let set = home.waiters.get(key);
  if (!set) {
    set = new Set();
    home.waiters.set(key, set);
  }
  set.add(waiter);
  const reader = home.reader;
  if (!reader) return schedule(pool, home);
  // The XREAD under way serves this waiter only if it reads the stream from here or before;
  // if it does, the waiter is read (a timeout then says "nothing arrived", not "read the log").
  const from = reader.inFlight?.get(key);
  if (!reader.inFlight) return;
  if (from !== undefined && from <= afterSeq) waiter.read = true;
  else void interrupt(pool, reader);
}

function newReader(redis: Redis | Cluster): Reader {
  const reader: Reader = {
    conn: readerConnection(redis),
    clientId: undefined,
    group: undefined,
    inFlight: undefined,
    issue: 0,
    interrupt: undefined,
  };
  // A reconnected reader has a new id: the next read asks again (the first connection's id is
  // the one asked before it was ready).
  let connections = 0;
  reader.conn.on("ready", () => {
    if (connections++ > 0) reader.clientId = undefined;
  });
  return reader;
}

/**
 * The reader's client id, for CLIENT UNBLOCK. Asked only between reads (a command sent during
 * one would queue behind it); an interruption uses the id already known.
 */
function askClientId(pool: Pool, reader: Reader): Promise<number | undefined> {
  if (pool.cluster) return Promise.resolve(undefined);
  reader.clientId ??= (reader.conn as Redis).client("ID").then(
    (id) => Number(id),
    () => undefined,
  );
  return reader.clientId;
}

/** Ends the reader's XREAD now, so that the next one names what was added since. */
async function interrupt(pool: Pool, reader: Reader): Promise<void> {
  const issue = reader.issue;
  if (pool.cluster) return reader.interrupt?.();
  const id = await reader.clientId;
  // CLIENT UNBLOCK may reach the server before the XREAD does: try again while it is the same one.
  for (let attempt = 0; attempt < 50 && id !== undefined; attempt++) {
    if (reader.inFlight === undefined || reader.issue !== issue || pool.closed) return;
    const done = await (pool.redis as Redis).client("UNBLOCK", id).catch(() => 0);
    if (Number(done) === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

function remove(pool: Pool, group: Group, waiter: Waiter): void {
  const set = group.waiters.get(waiter.key);
  if (!set?.delete(waiter)) return;
  if (set.size === 0) group.waiters.delete(waiter.key);
  if (group.waiters.size === 0 && !group.reader) {
    pool.groups.delete(group.id);
    const at = pool.queue.indexOf(group);
    if (at >= 0) pool.queue.splice(at, 1);
  }
}

/** Hands a free reader (or a new one, within the bound) to the group, else queues it. */
function schedule(pool: Pool, group: Group): void {
  if (group.reader || pool.queue.includes(group)) return;
  let reader = pool.readers.find((r) => r.group === undefined);
  if (!reader && pool.readers.length < pool.maxReaders) {
    reader = newReader(pool.redis);
    pool.readers.push(reader);
  }
  if (!reader) return void pool.queue.push(group);
  reader.group = group;
  group.reader = reader;
  void run(pool, reader);
}

/** The reader's next group once its own has no waiters, or others have waited for a turn. */
function rotate(pool: Pool, reader: Reader): void {
  const group = reader.group;
  if (group && group.waiters.size > 0 && pool.queue.length === 0) return;
  if (group) {
    group.reader = undefined;
    if (group.waiters.size > 0) pool.queue.push(group);
    else pool.groups.delete(group.id);
  }
  const next = pool.queue.shift();
  reader.group = next;
  if (next) next.reader = reader;
}

function dispatch(pool: Pool, group: Group, reply: [string, RawEntry[]][] | null): void {
  for (const [key, entries] of reply ?? []) {
    for (const waiter of [...(group.waiters.get(key) ?? [])]) {
      const fresh = entries.filter(([id]) => seqOf(id) > waiter.afterSeq);
      // Only entries that continue from where the waiter stands are news to it now.
      if (fresh.length === 0) continue;
      remove(pool, group, waiter);
      waiter.settle(fresh.slice(0, waiter.limit));
    }
  }
}

function fail(pool: Pool, group: Group): void {
  for (const set of [...group.waiters.values()]) {
    for (const waiter of [...set]) {
      remove(pool, group, waiter);
      waiter.settle(undefined);
    }
  }
}

async function run(pool: Pool, reader: Reader): Promise<void> {
  while (!pool.closed && reader.group) {
    const group = reader.group;
    // Waiters arm again right after a wake-up: gather them into this read rather than the next.
    await new Promise((resolve) => setImmediate(resolve));
    if (pool.closed) return;
    if (group.waiters.size === 0) {
      rotate(pool, reader);
      continue;
    }
    if (!(await readOnce(pool, reader, group))) return;
    rotate(pool, reader);
  }
}

/** One XREAD for the group's waiters, handed to them; false when the readers closed meanwhile. */
async function readOnce(pool: Pool, reader: Reader, group: Group): Promise<boolean> {
  const ids = new Map<string, number>();
  let count = 1;
  for (const [key, set] of group.waiters) {
    for (const waiter of set) {
      ids.set(key, Math.min(ids.get(key) ?? Infinity, waiter.afterSeq));
      count = Math.max(count, waiter.limit);
    }
  }
  for (const set of group.waiters.values()) for (const waiter of set) waiter.read = true;
  const keys = [...ids.keys()];
  const args = [...keys, ...keys.map((key) => `${ids.get(key)}-1`)];
  await askClientId(pool, reader);
  reader.inFlight = ids;
  reader.issue++;
  const block = pool.queue.length > 0 ? pool.sliceMs : pool.blockMs;
  const conn = reader.conn as Redis;
  const read = conn.xread("COUNT", count, "BLOCK", block, "STREAMS", ...args) as Promise<
    [string, RawEntry[]][] | null
  >;
  const interrupted = new Promise<"interrupted">((resolve) => {
    reader.interrupt = () => resolve("interrupted");
  });
  try {
    const reply = await Promise.race([read, interrupted]);
    if (reply === "interrupted") {
      // A cluster connection cannot be unblocked: drop it and read again on a new one.
      read.catch(() => undefined);
      conn.disconnect();
      reader.conn = readerConnection(pool.redis);
    } else {
      dispatch(pool, group, reply);
    }
  } catch {
    // A failed read is only a wake-up: the waiters read the log, which reports real failures.
    if (pool.closed) return false;
    fail(pool, group);
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    reader.inFlight = undefined;
    reader.interrupt = undefined;
  }
  return true;
}
