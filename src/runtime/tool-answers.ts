// Answers to a turn's waits: client tool results and approval decisions. The store takes the
// first answer for each call (on any replica); the turn hears it by a signal if it runs, or is
// resumed here once every wait is settled if it is parked.
import { invalidArgument } from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import type { ApprovalDecision, ClientToolResult, ToolAnswerReport } from "../domain/tool-calls.js";
import type { RuntimeDeps } from "./deps.js";
import type { SessionDriver } from "./session/index.js";
import { requireAnswerableTurn } from "./turn/index.js";

export interface ToolAnswers {
  /**
   * Stores the first answer for each pending call of the turn (the store decides, on any
   * replica) and wakes the turn; turn_not_running when the turn has completed or waits for no
   * client call.
   */
  submitToolResults(
    sessionId: SessionId,
    turnId: string,
    results: ClientToolResult[],
  ): Promise<ToolAnswerReport>;
  /**
   * Approval decisions for calls that wait for one (first decision wins, like results). A turn
   * that has completed or has no waits is turn_not_running; else a call whose tool needs no
   * approval is invalid_argument.
   */
  decideToolCalls(
    sessionId: SessionId,
    turnId: string,
    decisions: ApprovalDecision[],
  ): Promise<ToolAnswerReport>;
  /** A parked turn that can go on is driven now, here (or by its holder, if one beat us). */
  wakeParked(sessionId: SessionId): Promise<void>;
}

export function createToolAnswers(deps: RuntimeDeps, driver: SessionDriver): ToolAnswers {
  /** A parked turn that can go on is driven now, here (or by its holder, if one beat us). */
  async function wakeParked(sessionId: SessionId): Promise<void> {
    await deps.ready.markReady(sessionId);
    await driver.ensureDriven(sessionId).catch(() => undefined);
  }

  /**
   * After the store took answers (results or approval decisions; it decides the first one on any
   * replica): a running turn is woken by the signal of those accepted now (it also reads the
   * store while it waits); a parked one is resumed here once every wait is settled.
   */
  async function afterAnswers(
    sessionId: SessionId,
    turnId: string,
    freshCount: number,
    signal: () => Promise<boolean>,
  ): Promise<void> {
    if (freshCount > 0) await signal().catch(() => false);
    // Also when every answer was ignored: a client retrying after a lost response repairs a
    // wake-up that the first attempt's replica did not get to send.
    if ((await deps.store.readParkedTurn(sessionId))?.turnId === turnId) {
      await wakeParked(sessionId);
    }
  }

  return {
    wakeParked,
    async submitToolResults(sessionId, turnId, results) {
      await requireAnswerableTurn(deps.store, sessionId, turnId);
      const report = await deps.store.answerToolCalls(sessionId, turnId, results);
      const fresh = acceptedOnly(results, report);
      await afterAnswers(sessionId, turnId, fresh.length, () =>
        deps.signals.submitToolResults(sessionId, turnId, fresh),
      );
      return report;
    },
    async decideToolCalls(sessionId, turnId, decisions) {
      await requireAnswerableTurn(deps.store, sessionId, turnId);
      const states = await deps.store.readToolCalls(sessionId, turnId);
      const waits = (kind: "result" | "approval", callId: string) =>
        states.some((s) => s.kind === kind && s.callId === callId);
      decisions.forEach((d, i) => {
        if (!waits("approval", d.callId) && waits("result", d.callId)) {
          throw invalidArgument(
            `decisions[${i}].call_id`,
            `call ${d.callId} of turn ${turnId} needs no approval`,
          );
        }
      });
      const report = await deps.store.decideApprovals(sessionId, turnId, decisions);
      const fresh = acceptedOnly(decisions, report);
      await afterAnswers(sessionId, turnId, fresh.length, () =>
        deps.signals.submitDecisions(sessionId, turnId, fresh),
      );
      return report;
    },
  };
}

/** The answers the store accepted now, each once (a duplicate in one request is ignored). */
function acceptedOnly<T extends { callId: string }>(answers: T[], report: ToolAnswerReport): T[] {
  const accepted = new Set(report.accepted);
  return answers.filter((a) => accepted.delete(a.callId));
}
