// The page size of every List RPC, in one table: what 0 asks for and the most a request may ask,
// refused naming `page_size`. The values are the ones each request message's comment promises in
// proto/tether/v1, so a change here is a change of the wire.
import { invalidArgument } from "../domain/errors.js";

/** What `page_size` 0 means, and the largest one a request may name. */
export interface PageSizeRule {
  readonly fallback: number;
  readonly max: number;
}

/** Most lists: 100 unless asked, at most 1000. */
const LIST: PageSizeRule = { fallback: 100, max: 1000 };

/**
 * Each List RPC's rule. The two schedule lists keep their own, smaller pair on purpose: their
 * request messages have promised it since ScheduleService shipped (ListSchedules 50 unless asked;
 * ListScheduleRuns all kept runs, which SCHEDULE_RUNS_KEPT holds at 100), and a client that asks
 * for 101 is refused there today.
 */
export const PAGE_SIZES = {
  ListSessions: LIST,
  ListMessages: LIST,
  ListAgents: LIST,
  ListWork: LIST,
  ListInputs: LIST,
  ListWebhookDeliveries: LIST,
  ListSchedules: { fallback: 50, max: 100 },
  ListScheduleRuns: { fallback: 100, max: 100 },
} as const satisfies Record<string, PageSizeRule>;

export type ListRpc = keyof typeof PAGE_SIZES;

/** The page size a List request asks for: 0 is the RPC's default; more than its max is refused. */
export function pageSizeOf(rpc: ListRpc, requested: number): number {
  const { fallback, max } = PAGE_SIZES[rpc];
  if (requested > max) throw invalidArgument("page_size", `must be at most ${max}`);
  return requested === 0 ? fallback : requested;
}
