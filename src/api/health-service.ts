// grpc.health.v1 over a health state the server flips: "" is the server as a whole, every other
// name one service. Shutdown flips everything to NOT_SERVING first, so balancers stop routing
// new calls here while in-flight ones drain.
import type { ServiceImpl } from "@connectrpc/connect";
import { unknownService } from "../domain/errors.js";
import type { Health } from "../gen/grpc/health/v1/health_pb.js";
import { HealthCheckResponse_ServingStatus as ServingStatus } from "../gen/grpc/health/v1/health_pb.js";

export { ServingStatus };

export interface HealthState {
  /** Sets one service's status ("" for the server); watchers see the change. */
  set(service: string, status: ServingStatus): void;
  /** Sets every known service and the server at once (start and shutdown). */
  setAll(status: ServingStatus): void;
  /** Undefined for a service the server does not know. */
  get(service: string): ServingStatus | undefined;
  /** Every name the server reports on ("" included). */
  services(): string[];
  /** Calls `listener` on every change of `service`; returns the unsubscribe function. */
  subscribe(service: string, listener: (status: ServingStatus) => void): () => void;
}

/**
 * Process health only, for liveness probes: SERVING while the process runs and is not draining,
 * whatever its dependencies do ("" and the API services follow Redis reachability).
 */
export const LIVENESS_SERVICE = "tether.liveness";

/**
 * `tether.mcp.<name>`: one per configured MCP server, SERVING while connected. They follow their
 * server only: starting, draining and Redis outages (setAll) leave them alone.
 */
export const MCP_HEALTH_PREFIX = "tether.mcp.";

export function createHealthState(services: readonly string[] = []): HealthState {
  const statuses = new Map<string, ServingStatus>([
    ["", ServingStatus.NOT_SERVING],
    [LIVENESS_SERVICE, ServingStatus.NOT_SERVING],
  ]);
  for (const name of services) statuses.set(name, ServingStatus.NOT_SERVING);
  const listeners = new Map<string, Set<(status: ServingStatus) => void>>();

  function set(service: string, status: ServingStatus): void {
    if (statuses.get(service) === status) return;
    statuses.set(service, status);
    for (const listener of listeners.get(service) ?? []) listener(status);
  }

  return {
    set,
    setAll(status) {
      for (const name of [...statuses.keys()]) {
        if (!name.startsWith(MCP_HEALTH_PREFIX)) set(name, status);
      }
    },
    get: (service) => statuses.get(service),
    services: () => [...statuses.keys()],
    subscribe(service, listener) {
      let group = listeners.get(service);
      if (!group) listeners.set(service, (group = new Set()));
      group.add(listener);
      return () => group.delete(listener);
    },
  };
}

export interface HealthServiceOptions {
  /** Ends every Watch (after its latest status went out): the server is going away. */
  stopSignal?: AbortSignal;
}

export function createHealthService(
  state: HealthState,
  options: HealthServiceOptions = {},
): ServiceImpl<typeof Health> {
  return {
    check(req) {
      const status = state.get(req.service);
      if (status === undefined) throw unknownService(req.service);
      return { status };
    },

    async *watch(req, ctx) {
      const signal = options.stopSignal
        ? AbortSignal.any([ctx.signal, options.stopSignal])
        : ctx.signal;
      // Changes queue up between sends, but only the latest matters to a watcher.
      let pending: ServingStatus | undefined =
        state.get(req.service) ?? ServingStatus.SERVICE_UNKNOWN;
      let wake: (() => void) | undefined;
      const unsubscribe = state.subscribe(req.service, (status) => {
        pending = status;
        wake?.();
      });
      const aborted = new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
      let last: ServingStatus | undefined;
      try {
        while (!signal.aborted || pending !== undefined) {
          if (pending !== undefined && pending !== last) {
            last = pending;
            pending = undefined;
            yield { status: last };
            continue;
          }
          pending = undefined;
          await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
          wake = undefined;
        }
      } finally {
        unsubscribe();
      }
    },
  };
}
