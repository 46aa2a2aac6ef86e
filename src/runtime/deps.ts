// What the runtime is built from: ports, this replica's identity, and limits.
import type { Clock } from "../ports/clock.js";
import type { TranscriptCache } from "../ports/transcript-cache.js";
import type { SessionId } from "../domain/ids.js";
import type { CommitOutboxFold, FoldedOutboxClaim } from "../domain/session.js";
import type { LeaseOwner } from "../domain/lease.js";
import type { EventLog } from "../ports/event-log.js";
import type { ModelProvider } from "../ports/model-provider.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { WebhookOutboxStore } from "../ports/webhook-store.js";
import type { QuotaStore } from "../ports/quota-store.js";
import type { QuotaConfig } from "../domain/quotas.js";
import type { LivenessProbe } from "../ports/liveness-probe.js";
import type { ReadyIndex } from "../ports/ready-index.js";
import type { SessionSignals } from "../ports/session-signals.js";
import type { Sleep } from "../ports/sleep.js";
import type { ToolExecutor } from "../ports/tool-executor.js";
import type { Tracer } from "../ports/tracer.js";
import type { SelectableTools } from "../ports/turn-tools.js";
import type { TurnSettings } from "../domain/turn-settings.js";
import type { SessionBus } from "../ports/session-bus.js";
import type { BudgetPolicy } from "../ports/budget-guard.js";

/** The slice of a pino logger the runtime uses: one structured record per decision. */
export interface RuntimeLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Counters the runtime reports; the server's Prometheus metrics satisfy this shape. */
/** Where a quota said no: a turn's admission (it waits) or a submission (refused). */
export type QuotaRefusalPoint = "admission" | "submission";

export interface RuntimeMetrics {
  countTurn(outcome: string): void;
  countLeaseClaim(outcome: string): void;
  addProviderTokens(provider: string, kind: string, tokens: number): void;
  /** One model call ended (observation/model-call-metrics.ts); the receiver bounds the labels. */
  observeModelCall?(report: ModelCallReport): void;
  /** One run of a turn ended, or a parked turn was resumed (session/turn-end-metrics.ts). */
  observeTurn?(report: TurnReport): void;
  /** A quota held a turn back at admission or refused a submission (ADR 0015). */
  countQuotaRefusal?(tenant: string, limit: string, where: QuotaRefusalPoint): void;
  /** A committed turn made a compaction (its mode). Optional: older fakes leave it out. */
  countCompaction?(mode: string): void;
}

/** A model call as measured around the provider; raw ids, bounded by the metrics receiver. */
export interface ModelCallReport {
  sessionId: SessionId;
  provider: string;
  /** The model the call asked for; undefined: the provider's default. */
  model: string | undefined;
  seconds: number;
  /** Until the first stream event; undefined when none came. */
  firstChunkSeconds: number | undefined;
  inputTokens: number;
  outputTokens: number;
  /** Why the call failed ("cancelled", an HTTP status, "transport", "_OTHER"); undefined: it did not. */
  errorType: string | undefined;
}

export type TurnReport =
  /** A parked turn goes on: answered, cancelled or expired while it waited. */
  | { kind: "resumed"; sessionId: SessionId; status: string }
  /** A run of a turn ended (TurnEnd kind); committed ends carry the outcome. */
  | {
      kind: "ended";
      sessionId: SessionId;
      end: string;
      outcome: { kind: string; reason: string } | undefined;
      seconds: number;
    };

export interface RuntimeDeps {
  store: RuntimeStore;
  log: EventLog;
  signals: SessionSignals;
  /** Hints of sessions with waiting work, for the sweep that recovers dead holders' sessions. */
  ready: ReadyIndex;
  /** Tells a crashed local holder (same host and boot) from a live one, for early reclaim. */
  liveness: LivenessProbe;
  bus: SessionBus;
  provider: ModelProvider;
  /** Built-in server tools: offered to every turn. */
  serverTools?: ToolExecutor;
  /** Tool servers (MCP) whose tools a turn offers when its options select them. */
  selectableTools?: SelectableTools;
  /** Decoded transcripts this replica holds (see transcript-cache.ts). */
  transcripts: TranscriptCache;
  sleep: Sleep;
  /**
   * Set when webhooks are on: commits and parks then write their event to the session's outbox
   * (ADR 0021), with the due-outbox hint around each such write.
   */
  webhooks?: OutboxHints;
  clock: Clock;
  /** This replica as a lease holder. */
  owner: LeaseOwner;
  leaseTtlMs: number;
  clientToolTimeoutMs: number;
  /**
   * At most this many turns start in one iteration of the event loop (start-pacer.ts, ADR 0025);
   * 0 or unset: no pacing.
   */
  turnStartsPerIteration?: number;
  /** When a turn that waits only for outside answers parks, and how long it may stay parked. */
  parking: { afterMs: number; ttlMs: number; maxProgressBytes: number };
  /** The operator's tools (by name) whose calls wait for approval. */
  approvalRequiredTools?: readonly string[];
  defaults: TurnSettings;
  /** Model prices and tenant budgets (ADR 0016); sessions' own budgets need no policy. */
  budgets?: BudgetPolicy;
  logger: RuntimeLogger;
  metrics?: RuntimeMetrics;
  /** Spans of turns, model and tool calls; undefined when tracing is off (ADR 0013). */
  tracer?: Tracer;
  /** Per-tenant quotas (ADR 0015); without them no turn waits for a quota. */
  quotas?: RuntimeQuotas;
}

export interface RuntimeQuotas {
  store: QuotaStore;
  config: QuotaConfig;
  /** The longest a refused turn waits before its session is looked at again (1 s by default). */
  recheckMs?: number;
}

export const silentLogger: RuntimeLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/**
 * The due-outbox hint around a write of an outbox row (ADR 0021 "The hint"): the hint lives in
 * another slot than the row, so it is written before the row (due a delivery lease ahead) and
 * again after it (due now). A replica lost between the two leaves the row found a lease later.
 */
export interface OutboxHints {
  expect(outboxId: SessionId): Promise<void>;
  /** Due now; this replica's deliverer looks at once. */
  written(outboxId: SessionId): Promise<void>;
  /**
   * For a commit on a store that folds the outbox (RuntimeStore.foldsOutbox): the expect it
   * does in its step and, with a deliverer on this replica, the claim it takes for it.
   */
  fold?(outboxId: SessionId): CommitOutboxFold;
  /**
   * After that commit: its claimed rows to this replica's deliverer; without a ticket, the note
   * as `written` writes it; a replay (a ticket, no claim back) leaves the applied commit's hint.
   */
  folded?(outboxId: SessionId, fold: CommitOutboxFold, claimed?: FoldedOutboxClaim): Promise<void>;
}

/** The deliverer a commit folds its claim for (WebhookDeliverer's fold half). */
export interface FoldingDeliverer {
  claimTicket(): CommitOutboxFold["claim"];
  deliverClaimed(outboxId: SessionId, claimed: FoldedOutboxClaim, seenAtMs: number): void;
}

/** The hints over a store, `graceMs` (the delivery lease) ahead; `onWritten` nudges a deliverer. */
export function createOutboxHints(
  store: Pick<WebhookOutboxStore, "noteOutbox" | "expectOutbox">,
  clock: Clock,
  graceMs: number,
  onWritten?: (outboxId: SessionId) => boolean | void,
  local?: FoldingDeliverer,
): OutboxHints {
  const written = async (outboxId: SessionId) => {
    if (onWritten?.(outboxId) === true) return;
    await store.noteOutbox(outboxId, clock.nowMs());
  };
  return {
    expect(outboxId) {
      const now = clock.nowMs();
      return store.expectOutbox(outboxId, now, now + graceMs);
    },
    // A deliverer of this replica that takes the nudge looks at once, and the expect's hint
    // finds the row a lease later if this replica is lost first (ADR 0021 "Batches"): the note
    // is written only when no deliverer took it.
    written,
    // The commit writes the expect with its rows and takes them for this replica's deliverer
    // (ADR 0021 "Folded into the commit"): no expect, claim or note of its own.
    fold() {
      const now = clock.nowMs();
      const claim = local?.claimTicket();
      return { nowMs: now, dueAtMs: now + graceMs, ...(claim && { claim }) };
    },
    async folded(outboxId, fold, claimed) {
      if (!fold.claim) return written(outboxId);
      // No claim back with a ticket given: a replay. The commit that applied wrote the hint a
      // lease ahead and leased the rows to its deliverer (this one, or a lost replica's), so
      // they are found when that lease ends; a nudge now would only find them held.
      if (claimed) local?.deliverClaimed(outboxId, claimed, fold.nowMs);
    },
  };
}
