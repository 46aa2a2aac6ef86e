// One schedule fire (ADR 0020): the ordinary durable input submission with the occurrence's
// idempotency key, into the target session (its busy strategy applied) or into a new session of
// the target agent, named after the occurrence. Fired twice, it submits nothing new.
import { isTetherError } from "../../domain/errors.js";
import {
  clientSessionId,
  parseSessionId,
  TENANT_SEPARATOR,
  type SessionId,
} from "../../domain/ids.js";
import {
  occurrenceKey,
  TARGET_REFUSAL_PREFIX,
  type ScheduleClaim,
  type ScheduleRun,
  type ScheduleSpec,
} from "../../domain/schedules.js";
import { createSessionIfAbsent } from "../../ports/session-creation.js";
import type { RuntimeDeps } from "../deps.js";
import type { SessionDriver } from "../session/index.js";
import { agentBindingPatch, encodeInputPayload } from "../turn/index.js";

export interface FireOutcome {
  run: ScheduleRun;
  /** Set when the target refused for good: the schedule pauses with this reason. */
  pauseReason?: string;
}

type Delivery =
  { kind: "next_turn" } | { kind: "active_turn"; turnId: string; minBoundary: "after_work" };

/** The session an agent-target fire creates: one per occurrence, so a re-fire finds it. */
export function scheduledSessionId(tenant: string, scheduleId: string, at: number): SessionId {
  return parseSessionId(`${tenant}${TENANT_SEPARATOR}sched-${scheduleId}-${at}`, "session_id");
}

export function createScheduleFirer(deps: RuntimeDeps, driver: SessionDriver) {
  /** Where the input goes, or why it does not (a refusal that pauses, or a busy reject). */
  async function targetOf(
    claim: ScheduleClaim,
    spec: ScheduleSpec,
  ): Promise<{ sessionId: SessionId; delivery: Delivery } | { refused: string; pause: boolean }> {
    const { target } = spec;
    if (target.kind === "agent") {
      const sessionId = scheduledSessionId(
        claim.record.tenant,
        claim.record.scheduleId,
        claim.scheduledAt,
      );
      let metadataPatch: Record<string, string>;
      try {
        metadataPatch = await agentBindingPatch(deps.store, {
          agentId: target.agentId,
          clientAgentId: target.clientAgentId,
          version: target.version,
        });
      } catch (error) {
        if (!isTetherError(error, "agent_not_found")) throw error;
        return { refused: `${TARGET_REFUSAL_PREFIX}${error.message}`, pause: true };
      }
      // A re-fire of this occurrence finds the session the first one created.
      await createSessionIfAbsent(deps.store, sessionId, {
        ...target.sessionMetadata,
        ...metadataPatch,
      });
      return { sessionId, delivery: { kind: "next_turn" } };
    }
    const { sessionId, busyStrategy } = target;
    if (!(await deps.store.loadSession(sessionId))) {
      return {
        refused: `${TARGET_REFUSAL_PREFIX}session ${clientSessionId(sessionId)} does not exist`,
        pause: true,
      };
    }
    if (busyStrategy === "enqueue") return { sessionId, delivery: { kind: "next_turn" } };
    const [lease, parked] = await Promise.all([
      deps.store.currentLease(sessionId),
      deps.store.readParkedTurn(sessionId),
    ]);
    if ((lease || parked) && busyStrategy === "reject") {
      return {
        refused: `session ${clientSessionId(sessionId)} was busy (busy_strategy reject)`,
        pause: false,
      };
    }
    if (busyStrategy === "interrupt") {
      if (lease) await deps.signals.requestCancel(sessionId);
      if (parked) await deps.store.cancelParkedTurn(sessionId, parked.turnId);
    }
    if (busyStrategy === "steer") {
      const running =
        parked?.turnId ?? (lease ? await deps.signals.activeTurn(sessionId) : undefined);
      if (running)
        return {
          sessionId,
          delivery: { kind: "active_turn", turnId: running, minBoundary: "after_work" },
        };
    }
    return { sessionId, delivery: { kind: "next_turn" } };
  }

  return {
    async fire(claim: ScheduleClaim, spec: ScheduleSpec): Promise<FireOutcome> {
      const { scheduleId } = claim.record;
      const base = {
        runId: `run-${claim.scheduledAt}`,
        scheduledAt: claim.scheduledAt,
        firedAt: claim.now,
        ...(claim.runNow && { manual: true }),
      };
      const target = await targetOf(claim, spec);
      if ("refused" in target) {
        const sessionId =
          spec.target.kind === "session" ? clientSessionId(spec.target.sessionId) : "";
        const errorKind = target.pause ? "target_refused" : "target_busy";
        const run = { ...base, sessionId, error: target.refused, errorKind } as const;
        return target.pause ? { run, pauseReason: target.refused } : { run };
      }
      const receipt = await deps.store.submitInput({
        sessionId: target.sessionId,
        delivery: target.delivery,
        sourceKey: occurrenceKey(scheduleId, claim.scheduledAt),
        payload: encodeInputPayload({ items: spec.input, clientTools: [], settings: {} }),
      });
      // Marked once stored, never before (a holder's clear looks after it, ADR 0026).
      await deps.ready.markReady(target.sessionId);
      // Nobody waits on this turn: this replica offers to drive it now; the sweep is the backstop.
      void driver.ensureDriven(target.sessionId).catch(() => undefined);
      return {
        run: {
          ...base,
          sessionId: clientSessionId(target.sessionId),
          inputId: receipt.input.inputId,
        },
      };
    },
  };
}

export type ScheduleFirer = ReturnType<typeof createScheduleFirer>;
