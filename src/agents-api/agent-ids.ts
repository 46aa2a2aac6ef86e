// Server-chosen agent ids (`agent_…`) that sort newest first: the store lists agents in id order,
// so the front door's default order (`desc`, newest first) is the store's own order, one page
// read per page served (ADR 0037).
import { randomBytes } from "node:crypto";

export const AGENT_ID_PREFIX = "agent_";

/** Fixed width, so the text order of ids is the numeric order of their stamps. */
const STAMP_WIDTH = 11;
let lastStamp = 0;

/** A new id; later ids of this process sort before earlier ones (other replicas: by the clock). */
export function newAgentId(now: number = Date.now()): string {
  return newSortableId(AGENT_ID_PREFIX, now);
}

/** `prefix` + the inverted stamp + randomness: the scheme of every server-made door id. */
export function newSortableId(prefix: string, now: number = Date.now()): string {
  // Microseconds, made strictly increasing here, so two ids of one millisecond still order.
  const stamp = Math.max(now * 1000, lastStamp + 1);
  lastStamp = stamp;
  const inverted = (Number.MAX_SAFE_INTEGER - stamp).toString(36).padStart(STAMP_WIDTH, "0");
  return `${prefix}${inverted}${randomBytes(5).toString("hex")}`;
}

/** When an id of `newSortableId(prefix)` was made (ms), or undefined for any other id. */
export function sortableIdTime(prefix: string, id: string): number | undefined {
  if (!id.startsWith(prefix)) return undefined;
  const inverted = parseInt(id.slice(prefix.length, prefix.length + STAMP_WIDTH), 36);
  if (!Number.isSafeInteger(inverted)) return undefined;
  return Math.floor((Number.MAX_SAFE_INTEGER - inverted) / 1000);
}
