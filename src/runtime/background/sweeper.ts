// The sweep: every interval, offer to drive each session the ready index names. A live holder
// answers Busy and nothing happens; an expired or provably dead one is taken over. It is an
// efficiency measure only (clients waiting on a stream also kick their session), so one replica
// at a time may run it behind an optional singleton guard, and correctness never depends on it.
import type { SessionId } from "../../domain/ids.js";
import type { ReadyIndex } from "../../ports/ready-index.js";
import type { RuntimeLogger } from "../deps.js";
import type { SessionDriver } from "../session/index.js";

/** Runs `task` only if this replica holds the sweep (e.g. a redlock lock); false otherwise. */
export type SingletonGuard = (task: () => Promise<void>) => Promise<boolean>;

export interface SweeperOptions {
  driver: SessionDriver;
  ready: ReadyIndex;
  logger: RuntimeLogger;
  intervalMs: number;
  /** Sessions offered per sweep. */
  batch?: number;
  guard?: SingletonGuard;
  /** Reports how many sessions have work waiting, once per sweep. */
  metrics?: {
    setQueueDepth(kind: string, depth: number): void;
    /** The sessions found due, for a per-tenant count; none when another replica sweeps. */
    setReadySessions?(sessionIds: readonly SessionId[]): void;
  };
}

export interface Sweeper {
  /** One sweep now; resolves with how many sessions this replica started driving. */
  sweepOnce(): Promise<number>;
  stop(): void;
}

export function startSweeper(options: SweeperOptions): Sweeper {
  const batch = options.batch ?? 100;
  let running = false;

  async function sweep(): Promise<number> {
    let started = 0;
    const [sessions, waiting] = await Promise.all([
      options.ready.listReady(batch),
      options.ready.size(),
    ]);
    options.metrics?.setQueueDepth("ready_sessions", waiting);
    options.metrics?.setReadySessions?.(sessions);
    for (const sessionId of sessions) {
      const outcome = await options.driver.ensureDriven(sessionId);
      if (outcome.kind === "driving") started++;
      if (outcome.kind === "closing") break;
    }
    if (started > 0)
      options.logger.info({ started, hinted: sessions.length }, "sweep took over sessions");
    return started;
  }

  async function sweepOnce(): Promise<number> {
    if (running) return 0;
    running = true;
    try {
      if (!options.guard) return await sweep();
      let started = 0;
      const swept = await options.guard(async () => {
        started = await sweep();
      });
      // Another replica holds the sweep and reports the counts: none here, so max() reads it.
      if (!swept) options.metrics?.setReadySessions?.([]);
      return started;
    } catch (error) {
      options.logger.warn({ error }, "sweep failed");
      return 0;
    } finally {
      running = false;
    }
  }

  const timer = setInterval(() => void sweepOnce(), options.intervalMs);
  timer.unref();
  return { sweepOnce, stop: () => clearInterval(timer) };
}
