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
  /**
   * Renews a running turn's quota slot with the leases (ADR 0015) until the returned function is
   * called, so a replica that dies gives its slots back within a lease TTL.
   */
  keepSlot(tenant: string, holder: string): () => void;
}

type KeeperDeps = Pick<RuntimeDeps, "store" | "leaseTtlMs" | "logger" | "metrics" | "quotas">;

export function createLeaseKeeper(deps: KeeperDeps): LeaseKeeper {
  const renewEvery = Math.max(10, Math.floor(deps.leaseTtlMs / 3));
  const held = new Map<object, { fence: LeaseFence; onLost: (error: unknown) => void }>();
  const slots = new Map<object, { tenant: string; holder: string }>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stopIfIdle = (): void => {
    if (held.size === 0 && slots.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

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

  /** One renewTurnSlots call per tenant (its slots share one Redis slot). */
  const renewSlots = (): void => {
    const quotas = deps.quotas;
    if (!quotas || slots.size === 0) return;
    const byTenant = new Map<string, string[]>();
    for (const { tenant, holder } of slots.values()) {
      byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), holder]);
    }
    for (const [tenant, holders] of byTenant) {
      quotas.store.renewTurnSlots(tenant, holders, deps.leaseTtlMs).catch((error: unknown) => {
        deps.logger.warn({ tenant, error }, "quota slot renewal failed");
      });
    }
  };

  const tick = (): void => {
    renewSlots();
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
        stopIfIdle();
      };
    },
    keepSlot(tenant, holder) {
      const handle = {};
      slots.set(handle, { tenant, holder });
      timer ??= setInterval(tick, renewEvery);
      return () => {
        slots.delete(handle);
        stopIfIdle();
      };
    },
  };
}
