// Follows the backend's reachability: health reports NOT_SERVING while Redis does not answer and
// SERVING again once it does, so load balancers stop routing here without a restart either way.
// The liveness name is left alone: a Redis outage must not restart every replica.
import { LIVENESS_SERVICE, ServingStatus, type HealthState } from "../api/health-service.js";
import type { Logger } from "./logger.js";

export interface BackendHealthOptions {
  ping(): Promise<void>;
  health: HealthState;
  logger: Logger;
  intervalMs: number;
  /** Once draining, health stays NOT_SERVING whatever the backend does. */
  draining: AbortSignal;
  /** False when the backend did not answer at start: health begins NOT_SERVING. */
  initiallyReachable?: boolean;
}

export function watchBackendHealth(options: BackendHealthOptions): { stop(): void } {
  let reachable = true;
  let checking = false;
  const apply = (ok: boolean): void => {
    reachable = ok;
    // Liveness is about this process; restarting replicas heals no Redis outage (ADR 0301).
    for (const service of options.health.services()) {
      if (service === LIVENESS_SERVICE) continue;
      options.health.set(service, ok ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
    }
  };
  const check = async (): Promise<void> => {
    if (checking || options.draining.aborted) return;
    checking = true;
    let ok = true;
    try {
      await withTimeout(options.ping(), options.intervalMs);
    } catch {
      ok = false;
    } finally {
      checking = false;
    }
    if (options.draining.aborted || ok === reachable) return;
    apply(ok);
    if (ok) options.logger.info({}, "backend reachable again: serving");
    else options.logger.warn({}, "backend unreachable: not serving");
  };
  if (options.initiallyReachable === false) apply(false);
  const timer = setInterval(() => void check(), options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out")), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
