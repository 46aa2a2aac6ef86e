// Keeps the leases this replica holds alive: one timer for the replica, and on each tick one
// renewLeases call for every lease held (in calls of at most MAX_RENEWALS_PER_CALL), instead of
// a timer and a store call per lease. A lease is renewed at most a third of its TTL after it was
// claimed and every third of the TTL after that, as a timer of its own would.
import { leaseExpired } from "../../domain/errors.js";
import { MAX_RENEWALS_PER_CALL, type LeaseFence } from "../../domain/lease.js";
import type { RuntimeDeps } from "../deps.js";

export interface LeaseKeeper {
  /**
   * Renews the lease until the returned function is called; `onLost` is called once, with the
   * store's refusal or error, when a renewal does not go through (the holder must stop).
   */
  keep(fence: LeaseFence, onLost: (error: unknown) => void): () => void;
}

type KeeperDeps = Pick<RuntimeDeps, "store" | "leaseTtlMs" | "logger" | "metrics">;

export function createLeaseKeeper(deps: KeeperDeps): LeaseKeeper {
  const renewEvery = Math.max(10, Math.floor(deps.leaseTtlMs / 3));
  const held = new Map<object, { fence: LeaseFence; onLost: (error: unknown) => void }>();
  let timer: ReturnType<typeof setInterval> | undefined;

  const lose = (handle: object, error: unknown): void => {
    const hold = held.get(handle);
    if (!hold) return;
    held.delete(handle);
    deps.metrics?.countLeaseClaim("lost");
    deps.logger.warn(
      { sessionId: hold.fence.sessionId, fencingToken: hold.fence.fencingToken, error },
      "lease renewal refused",
    );
    hold.onLost(error);
  };

  const renewBatch = async (handles: object[]): Promise<void> => {
    const fences = handles.map((h) => (held.get(h) as { fence: LeaseFence }).fence);
    try {
      const renewals = await deps.store.renewLeases(fences, deps.leaseTtlMs);
      renewals.forEach((renewal, i) => {
        const fence = fences[i] as LeaseFence;
        if (renewal.kind === "expired") {
          lose(handles[i] as object, leaseExpired(fence.sessionId, fence.fencingToken));
        }
      });
    } catch (error) {
      // As with a renewal of its own: a holder that cannot renew cannot know it still holds.
      for (const handle of handles) lose(handle, error);
    }
  };

  const tick = (): void => {
    const handles = [...held.keys()];
    for (let i = 0; i < handles.length; i += MAX_RENEWALS_PER_CALL) {
      void renewBatch(handles.slice(i, i + MAX_RENEWALS_PER_CALL));
    }
  };

  return {
    keep(fence, onLost) {
      const handle = {};
      held.set(handle, { fence, onLost });
      timer ??= setInterval(tick, renewEvery);
      return () => {
        held.delete(handle);
        if (held.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
  };
}
