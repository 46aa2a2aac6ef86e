// When a turn parks. A turn whose every running call of its current batch waits for someone
// outside (a client's result, a person's approval) for longer than TETHER_PARK_AFTER_MS stores
// its progress and releases the session (ParkedTurnStore); the replica forgets it. What it saves
// is the engine's state at the start of the batch, the results of batch calls that already
// finished (they never run again) and what the stream already showed; a resume runs the batch
// again from there, so no model call and no finished tool is repeated.
import {
  settingsFromStored,
  settingsToStored,
  type StoredTurnSettings,
} from "../../domain/turn-settings.js";
import type { ToolCallPart } from "../../domain/conversation.js";
import type { TurnProgress } from "../../engine/index.js";
import type { ToolDefinition, ToolExecutor, ToolResult } from "../../ports/tool-executor.js";
import type { TurnSettings } from "./input-payload.js";
import { decodeJson, encodeJson } from "./message-codec.js";

/** How long a parked turn that waits may go without a look (a lost wake-up costs this much). */
export const PARK_RECHECK_MS = 5 * 60_000;

/** What a parked turn stores (ParkTurnDraft.progress), as JSON. */
export interface ParkedProgress {
  v: 1;
  engine: TurnProgress;
  /** Executor results of batch calls that finished before the turn parked. */
  settled: Record<string, ToolResult>;
  /** Stream keys already shown (see TurnEventMapperContext.shown). */
  shown: string[];
  settings: TurnSettings;
  clientTools: ToolDefinition[];
  /** The W3C traceparent of the turn's span before it parked: the resumed part links to it. */
  trace?: string;
}

export const encodeProgress = (progress: ParkedProgress): string =>
  encodeJson({ ...progress, settings: settingsToStored(progress.settings) });

export function decodeProgress(raw: string): ParkedProgress {
  const parsed =
    decodeJson<Partial<Omit<ParkedProgress, "settings"> & { settings: StoredTurnSettings }>>(raw);
  if (parsed.v !== 1 || parsed.engine === undefined) {
    throw new Error("a parked turn's progress is not in a format this version reads");
  }
  return {
    v: 1,
    engine: parsed.engine,
    settled: parsed.settled ?? {},
    shown: parsed.shown ?? [],
    settings: settingsFromStored(parsed.settings),
    clientTools: parsed.clientTools ?? [],
    ...(typeof parsed.trace === "string" && { trace: parsed.trace }),
  };
}

/**
 * The tool calls a parked turn's batch holds (names and arguments of the calls it waits on), or
 * none when its progress is in a format this version does not read.
 */
export function parkedBatch(raw: string): ToolCallPart[] {
  try {
    return decodeProgress(raw).engine.batch;
  } catch {
    return [];
  }
}

export interface ParkingMonitorOptions {
  /** 0 parks as soon as the batch waits only outside; Infinity never parks. */
  parkAfterMs: number;
  /** How many of the turn's calls and approvals wait for an outside answer right now. */
  outsideWaits: () => number;
  /**
   * Stores the turn and stops it; called at most once. False when the turn cannot park (its
   * progress is too large): it then waits where it is, and the monitor never tries again.
   */
  park: () => boolean;
  /** Results of batch calls that finished before the turn parked (a resumed turn). */
  settled?: Record<string, ToolResult>;
  setTimer?: (fn: () => void, ms: number) => NodeJS.Timeout;
}

export interface ParkingMonitor {
  /** Called by the engine before each batch. */
  onToolBatch(progress: TurnProgress): void;
  /** Counts calls in flight and keeps their results; answers settled calls from the store. */
  wrap(executor: ToolExecutor): ToolExecutor;
  /** Something changed (a wait started or ended): look again. */
  check(): void;
  /** Park at once if the batch waits only outside (the replica is closing). */
  parkNowIfWaiting(): boolean;
  parking(): boolean;
  /** The state to store: the batch's start and the calls settled since. */
  snapshot(): { engine: TurnProgress; settled: Record<string, ToolResult> } | undefined;
  dispose(): void;
}

export function createParkingMonitor(options: ParkingMonitorOptions): ParkingMonitor {
  let batch: TurnProgress | undefined;
  let settled = new Map<string, ToolResult>(Object.entries(options.settled ?? {}));
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  let parked = false;
  let disabled = false;

  const waitsOnlyOutside = (): boolean =>
    batch !== undefined && inFlight > 0 && inFlight === options.outsideWaits();

  const stopTimer = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };

  const parkIfStillWaiting = (): boolean => {
    timer = undefined;
    if (parked || disabled || !waitsOnlyOutside()) return false;
    parked = true;
    if (options.park()) return true;
    parked = false;
    disabled = true;
    return false;
  };

  const monitor: ParkingMonitor = {
    onToolBatch(progress) {
      // Results of a resumed batch stay settled; a new batch starts from none.
      if (batch !== undefined) settled = new Map();
      batch = progress;
    },
    wrap(executor) {
      return {
        definitions: () => executor.definitions(),
        async execute(call, context) {
          const known = settled.get(call.callId);
          if (known !== undefined) return known;
          inFlight++;
          monitor.check();
          try {
            const result = await executor.execute(call, context);
            if (!parked) settled.set(call.callId, result);
            return result;
          } catch (error) {
            // A tool that failed has finished too: a resume gives the same error, not a re-run.
            if (!parked && !context.signal.aborted) {
              const message = error instanceof Error ? error.message : String(error);
              settled.set(call.callId, { output: { error: message }, isError: true });
            }
            throw error;
          } finally {
            inFlight--;
            monitor.check();
          }
        },
      };
    },
    check() {
      if (parked || disabled || !Number.isFinite(options.parkAfterMs)) return;
      if (!waitsOnlyOutside()) return stopTimer();
      if (timer === undefined) {
        timer = (options.setTimer ?? setTimeout)(
          () => void parkIfStillWaiting(),
          options.parkAfterMs,
        );
      }
    },
    parkNowIfWaiting() {
      stopTimer();
      return parkIfStillWaiting();
    },
    parking: () => parked,
    snapshot: () =>
      batch === undefined ? undefined : { engine: batch, settled: Object.fromEntries(settled) },
    dispose: stopTimer,
  };
  return monitor;
}
