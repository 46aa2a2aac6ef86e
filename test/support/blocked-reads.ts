// What a test waits for before it appends to a watched log: the blocking XREAD in place on the
// server. Read from the server (CLIENT LIST, INFO), since the reader's connection is the log's own.
import type { Cluster, Redis } from "ioredis";

/** Clients blocked in an XREAD now, as `<port>:<client id>`, over a server or a cluster's masters. */
export async function blockedReads(conn: Redis | Cluster): Promise<Set<string>> {
  const nodes = conn.isCluster ? (conn as Cluster).nodes("master") : [conn as Redis];
  const blocked = new Set<string>();
  for (const node of nodes) {
    const list = (await node.client("LIST")) as string;
    for (const line of list.split("\n")) {
      const field = (name: string) => new RegExp(`(?:^| )${name}=(\\S*)`, "u").exec(line)?.[1];
      if (field("cmd") === "xread" && field("flags")?.includes("b") === true) {
        blocked.add(`${node.options.port}:${field("id")}`);
      }
    }
  }
  return blocked;
}

/**
 * Resolves once an XREAD blocks that was not blocked in `before` (from `blockedReads`). On a
 * server shared with other test files another file's read may be taken for it: the wait then
 * ends early, which weakens the test's timing but never fails it.
 */
export async function newBlockedRead(conn: Redis | Cluster, before: Set<string>): Promise<boolean> {
  const now = await blockedReads(conn);
  return [...now].some((id) => !before.has(id));
}

/** XREAD commands a standalone server has run since it started (INFO commandstats). */
export async function xreadsRun(conn: Redis): Promise<number> {
  const stats = await conn.info("commandstats");
  return Number(/cmdstat_xread:calls=(\d+)/u.exec(stats)?.[1] ?? 0);
}
