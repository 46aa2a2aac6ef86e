// The one way a Redis operation refuses a stale fence: its script answered that the fence no
// longer names the session's live lease (LEASE_EXPIRED, or a refusal of the fence), so the
// decision is recorded for whoever listens and the caller gets session_execution_lease_expired
// naming the fence's token, as the memory store's `fenced` does.
import { leaseExpired } from "../../domain/errors.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { FencedStoreOperation } from "../../ports/runtime-store.js";
import { logFenceRefused } from "../shared/store-log.js";
import type { RedisContext } from "./context.js";

export function refuseFence(
  ctx: Pick<RedisContext, "log">,
  operation: FencedStoreOperation,
  fence: LeaseFence,
): never {
  logFenceRefused(ctx.log, operation, fence);
  throw leaseExpired(fence.sessionId, fence.fencingToken);
}
