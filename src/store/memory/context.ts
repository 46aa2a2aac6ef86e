// Shared state of one memory store instance, handed to each operation module.
import type { QuotaStore } from "../../ports/quota-store.js";
import type { SessionId } from "../../domain/ids.js";
import type { Clock } from "../../ports/clock.js";
import type { LivenessProbe } from "../../ports/liveness-probe.js";
import type { StoreLimits } from "../../ports/runtime-store.js";
import type { StoreLogger } from "../shared/store-log.js";
import type { KeyedMutex } from "./keyed-mutex.js";
import type { ToolCallState } from "../../domain/tool-calls.js";
import type { AgentVersion } from "../../domain/agents.js";

/** One agent's versions, oldest first; a deleted agent keeps them for pinned sessions. */
export interface AgentRecord {
  versions: AgentVersion[];
  deleted: boolean;
}
import { emptyCell, type SessionCell } from "./session-cell.js";
import type { MemoryWebhooks } from "./webhook-state.js";
import type { AnnouncementLog } from "./event-log.js";
import type { SteerNotice } from "../../ports/session-signals.js";

/** One turn's client tool calls (tool-call-ops.ts), dropped once `expiresAtMs` passed. */
export interface TurnToolCalls {
  calls: Map<string, ToolCallState>;
  expiresAtMs: number;
}

export interface MemoryContext {
  cells: Map<SessionId, SessionCell>;
  /** Lease generations outlive deleted sessions, so fencing tokens never repeat. */
  generations: Map<SessionId, number>;
  /** Tool call records by session and turn (tool-call-ops.ts); they outlive deleted sessions. */
  toolCalls: Map<string, TurnToolCalls>;
  /** Agents by id (agent-ops.ts); apart from the sessions, which only name them. */
  agents: Map<string, AgentRecord>;
  /** Tenant spend in micros by "<tenant> <window>" (ADR 0016); apart from any session. */
  tenantSpend: Map<string, number>;
  /** Webhook outboxes, endpoints and delivery logs (webhook-ops.ts, ADR 0021). */
  webhooks: MemoryWebhooks;
  clock: Clock;
  probe: LivenessProbe;
  limits: StoreLimits;
  mutex: KeyedMutex;
  /** Decision records (lease claims, refusals); undefined when nobody listens. */
  log: StoreLogger | undefined;
  /** Test hook between a claim's lease validation and its mutation. */
  afterClaimValidation: (() => Promise<void> | void) | undefined;
  /** The quota store a commit's tenant charges reach (ADR 0038); none: quotas keep their steps. */
  quotas?: QuotaStore;
  /** The event log a commit's announcement goes to (ADR 0011); none: announcements ignored. */
  announcements?: AnnouncementLog;
  /** Told of each new steer in its submit's step (ADR 0041); none: nobody listens for them. */
  steerNotice?: SteerNotice;
}

export function cellOf(ctx: MemoryContext, sessionId: SessionId): SessionCell {
  let cell = ctx.cells.get(sessionId);
  if (!cell) {
    cell = emptyCell(sessionId);
    ctx.cells.set(sessionId, cell);
  }
  return cell;
}

/**
 * One above the session's last generation and never below the store clock in ms: the Redis
 * store's rule (ADR 0022), under which a store that lost its counter but whose clock moved on
 * still issues greater tokens. The reference store keeps it so that the laws hold it everywhere.
 */
export function nextGeneration(ctx: MemoryContext, sessionId: SessionId, nowMs: number): number {
  const next = Math.max((ctx.generations.get(sessionId) ?? 0) + 1, Math.floor(nowMs));
  ctx.generations.set(sessionId, next);
  return next;
}

/** Runs one serialized step for a session: every check and every write inside `fn`. */
export function atomically<T>(
  ctx: MemoryContext,
  sessionId: SessionId,
  fn: (cell: SessionCell, nowMs: number) => Promise<T> | T,
): Promise<T> {
  return ctx.mutex.run(sessionId, () => fn(cellOf(ctx, sessionId), ctx.clock.nowMs()));
}
