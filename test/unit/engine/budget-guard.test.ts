// The engine's budget guard seam (ADR 0016): asked before every model call, told after it; a
// refusal stops the turn as budget_exhausted after a budget_reached event, keeping its usage.
import { describe, expect, it } from "vitest";
import type { UsageTotals } from "../../../src/domain/usage.js";
import type { BudgetDecision, BudgetGuard } from "../../../src/ports/budget-guard.js";
import type { ScriptedCall } from "../../../src/providers/scripted.js";
import { engineWith, recordingSink, text, toolCall, toolsOf } from "./helpers.js";

const go = [{ type: "text" as const, text: "go" }];

function usageOf(input: number, output: number): ScriptedCall["response"] {
  return {
    usage: {
      inputTokens: input,
      outputTokens: output,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    },
  };
}

/** A guard that allows `calls` model calls and records what it was asked and told. */
function countingGuard(calls: number) {
  const before: UsageTotals[] = [];
  const after: [UsageTotals, UsageTotals][] = [];
  const guard: BudgetGuard = {
    beforeModelCall: (turnUsage): BudgetDecision => {
      before.push(turnUsage);
      return before.length <= calls
        ? { go: true }
        : {
            go: false,
            reached: {
              scope: "session",
              limit: "input_tokens",
              max: 25,
              spent: turnUsage.inputTokens,
            },
          };
    },
    afterModelCall: (callUsage, turnUsage) => {
      after.push([callUsage, turnUsage]);
    },
  };
  return { guard, before, after };
}

const again = toolsOf({ again: () => Promise.resolve({ output: "ok" }) });

describe("budget guard", () => {
  it("stops before the model call it refuses, with budget_reached and the usage so far", async () => {
    const { guard, before, after } = countingGuard(2);
    const { engine, provider } = engineWith(
      [
        { response: { ...usageOf(10, 1), parts: [toolCall("c1", "again")] } },
        { response: { ...usageOf(20, 2), parts: [toolCall("c2", "again")] } },
        { response: { ...usageOf(40, 4), fullText: "never", parts: [text("never")] } },
      ],
      { tools: again, budgetGuard: guard },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "spend", input: go, sink });

    expect(provider.callCount).toBe(2);
    expect(turn.outcome).toEqual({
      kind: "stopped",
      reason: "budget_exhausted",
      usedTokens: 33,
      budgetTokens: 0,
      reached: { scope: "session", limit: "input_tokens", max: 25, spent: 30 },
    });
    expect(turn.usage).toMatchObject({ inputTokens: 30, outputTokens: 3 });
    // Both tool calls ran: the refusal comes before a model call, never between call and tools.
    expect(turn.toolCalls.map((c) => c.callId)).toEqual(["c1", "c2"]);
    expect(sink.events.slice(-2)).toEqual([
      { type: "budget_reached", scope: "session", limit: "input_tokens", max: 25, spent: 30 },
      { type: "terminal", outcome: turn.outcome },
    ]);
    expect(before.map((u) => u.inputTokens)).toEqual([0, 10, 30]);
    expect(after.map(([call, total]) => [call.inputTokens, total.inputTokens])).toEqual([
      [10, 10],
      [20, 30],
    ]);
  });

  it("a refusal before the first call stops the turn without calling the model", async () => {
    const { guard, after } = countingGuard(0);
    const { engine, provider } = engineWith(
      [{ response: { ...usageOf(5, 1), fullText: "hi", parts: [text("hi")] } }],
      { budgetGuard: guard },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "none", input: go, sink });
    expect(provider.callCount).toBe(0);
    expect(turn.outcome).toMatchObject({ kind: "stopped", reason: "budget_exhausted" });
    expect(turn.usage).toMatchObject({ inputTokens: 0, outputTokens: 0 });
    expect(turn.messages).toEqual([{ role: "user", content: go }]);
    expect(after).toEqual([]);
    expect(sink.events.map((e) => e.type)).toEqual(["budget_reached", "terminal"]);
  });

  it("is charged after every call, also the last one of a finished turn", async () => {
    const { guard, after } = countingGuard(5);
    const { engine } = engineWith(
      [{ response: { ...usageOf(7, 3), fullText: "done", parts: [text("done")] } }],
      { budgetGuard: guard },
    );
    const turn = await engine.runTurn({ turnId: "done", input: go });
    expect(turn.outcome).toEqual({ kind: "finished", reason: "assistant_message", text: "done" });
    expect(after.map(([call]) => [call.inputTokens, call.outputTokens])).toEqual([[7, 3]]);
  });

  it("the turn's token_budget still stops it without asking the guard, announced as the turn's budget", async () => {
    const { guard, before } = countingGuard(5);
    const { engine, provider } = engineWith(
      [
        { response: { ...usageOf(15, 5), parts: [toolCall("c1", "again")] } },
        { response: { ...usageOf(15, 5), parts: [toolCall("c2", "again")] } },
      ],
      { tools: again, maxTurnTokens: 20, budgetGuard: guard },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "tokens", input: go, sink });
    expect(provider.callCount).toBe(1);
    expect(sink.events.slice(-2)).toEqual([
      { type: "budget_reached", scope: "turn", limit: "tokens", max: 20, spent: 20 },
      { type: "terminal", outcome: turn.outcome },
    ]);
    expect(turn.outcome).toEqual({
      kind: "stopped",
      reason: "budget_exhausted",
      usedTokens: 20,
      budgetTokens: 20,
    });
    expect(before).toHaveLength(1);
  });
});
