// Compaction inside the turn loop: when it runs, what the provider is sent afterwards, what the
// turn commits, how the summarizer's input stays bounded, and how a failed summary ends the turn.
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/domain/conversation.js";
import { resolveContextPolicy, type ContextManagement } from "../../../src/domain/compaction.js";
import { createTurnEngine } from "../../../src/engine/index.js";
import { ProviderError, type ModelRequest } from "../../../src/ports/model-provider.js";
import { systemSleep } from "../../../src/ports/sleep.js";
import type { BudgetGuard } from "../../../src/ports/budget-guard.js";
import { createScriptedProvider, type ScriptedCall } from "../../../src/providers/scripted.js";
import { recordingSink, text, toolCall, toolsOf } from "./helpers.js";

const SUMMARIZER = "You write summaries of conversations.";
const isSummaryCall = (r: ModelRequest): boolean =>
  r.messages[0]?.role === "system" && r.messages[0].text === SUMMARIZER;

const usage = (input: number, output = 10) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});

/** A history of `turns` exchanges, each answer `size` characters. */
function history(turns: number, size: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: "user", content: [text(`question ${i}`)] });
    out.push({ role: "assistant", parts: [text(`answer ${i} `.padEnd(size, "x"))] });
  }
  return out;
}

function setup(
  policy: ContextManagement | undefined,
  answer: (r: ModelRequest) => ScriptedCall,
  budgetGuard?: BudgetGuard,
) {
  const requests: ModelRequest[] = [];
  const provider = createScriptedProvider({
    name: "scripted",
    script: (r) => {
      // The engine's view array grows after the call: keep it as it was sent.
      requests.push({ ...r, messages: [...r.messages] });
      return answer(r);
    },
  });
  const tools = toolsOf({ fetch: () => Promise.resolve({ output: "R".repeat(8000) }) });
  const engine = createTurnEngine({
    provider,
    tools,
    sleep: systemSleep,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    model: { model: "m-1" },
    contextPolicy: resolveContextPolicy(policy),
    ...(budgetGuard && { budgetGuard }),
  });
  return { engine, requests };
}

/** What a real server would count: about four characters a token of what it was sent. */
const counted = (r: ModelRequest): number => Math.ceil(JSON.stringify(r.messages).length / 4);

const plain = (r: ModelRequest): ScriptedCall =>
  isSummaryCall(r)
    ? { response: { parts: [text("SUMMARY")], usage: usage(900, 40) } }
    : { response: { parts: [text("fine")], usage: usage(300) } };

describe("compaction in the turn loop", () => {
  it("is off by default: a long history is sent whole and no summary call is made", async () => {
    const { engine, requests } = setup(undefined, plain);
    const result = await engine.runTurn({
      turnId: "t1",
      history: history(20, 4000),
      input: [text("next")],
    });
    expect(requests.length).toBe(1);
    expect(requests[0]?.messages.length).toBe(41);
    expect(result.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("summarizes what precedes the kept tail; the provider gets the summary and the tail", async () => {
    const { engine, requests } = setup({ triggerTokens: 5000, keepRecentTokens: 1500 }, plain);
    const sink = recordingSink();
    // 20 exchanges of 4000 characters: about 20,000 tokens by the four-characters estimate.
    const result = await engine.runTurn({
      turnId: "t1",
      history: history(20, 4000),
      input: [text("next")],
      sink,
    });
    expect(result.outcome).toEqual({ kind: "finished", reason: "assistant_message", text: "fine" });
    const item = result.messages[1];
    expect(item?.role).toBe("compaction");
    if (item?.role !== "compaction") return;
    // The tail: the last exchange (about 1010 tokens) and the new input; 1500 cannot hold two.
    expect(item.coversThroughMessage).toBe(38);
    expect(item.summary).toBe("SUMMARY");
    expect(item.provider).toBe("scripted");
    expect(item.model).toBe("m-1");
    expect(item.tokensBefore).toBeGreaterThan(20_000);
    expect(item.tokensAfter).toBeLessThan(1500);
    const turnCall = requests.filter((r) => !isSummaryCall(r));
    expect(turnCall.length).toBe(1);
    expect(turnCall[0]?.messages.map((m) => m.role)).toEqual(["user", "user", "assistant", "user"]);
    expect(turnCall[0]?.messages[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: "Summary of the earlier conversation:\nSUMMARY" }],
    });
    const compacted = sink.events.find((e) => e.type === "context_compacted");
    expect(compacted).toEqual({
      type: "context_compacted",
      tokensBefore: item.tokensBefore,
      tokensAfter: item.tokensAfter,
      coversThroughMessage: 38,
      mode: "summarize",
      clearedToolResults: 0,
    });
    const usages = sink.events.filter((e) => e.type === "usage");
    expect(usages.map((e) => e.type === "usage" && e.purpose)).toContain("compaction");
    // The summary calls count in the turn's usage: 300 for the answer and 900 per summary call.
    const summaryCalls = requests.filter(isSummaryCall).length;
    expect(result.usage.inputTokens).toBe(300 + 900 * summaryCalls);
  });

  it("bounds each summary call's input to half the trigger and summarizes the summaries", async () => {
    const { engine, requests } = setup({ triggerTokens: 5000, keepRecentTokens: 1500 }, plain);
    await engine.runTurn({ turnId: "t1", history: history(20, 4000), input: [text("next")] });
    const summaries = requests.filter(isSummaryCall);
    // 38 covered messages of about 1000 tokens in chunks of at most 2500 tokens: 19+ calls,
    // then one over the partial summaries.
    expect(summaries.length).toBeGreaterThan(2);
    for (const r of summaries) {
      const chars = JSON.stringify(r.messages).length;
      expect(chars).toBeLessThan(5000 * 4);
    }
    const last = summaries.at(-1);
    expect(JSON.stringify(last?.messages)).toContain("consecutive summaries");
  });

  it("a later turn continues from the committed compaction, not the originals", async () => {
    const { engine, requests } = setup({ triggerTokens: 5000, keepRecentTokens: 1500 }, plain);
    const first = await engine.runTurn({
      turnId: "t1",
      history: history(20, 4000),
      input: [text("next")],
    });
    const committed = [...history(20, 4000), ...first.messages];
    requests.length = 0;
    await engine.runTurn({ turnId: "t2", history: committed, input: [text("again")] });
    expect(requests.filter(isSummaryCall).length).toBe(0);
    expect(requests[0]?.messages.map((m) => m.role)).toEqual([
      "user",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
  });

  it("clears old tool results first and makes no summary call when that is enough", async () => {
    let n = 0;
    const { engine, requests } = setup(
      { triggerTokens: 5000, clearToolResults: { keepLast: 1, excludeTools: [] } },
      (r) => {
        if (isSummaryCall(r)) return { response: { parts: [text("S")] } };
        n++;
        return n <= 3
          ? { response: { parts: [toolCall(`c${n}`, "fetch")], usage: usage(counted(r)) } }
          : { response: { parts: [text("done")], usage: usage(counted(r)) } };
      },
    );
    const result = await engine.runTurn({ turnId: "t1", input: [text("go")] });
    expect(result.outcome.kind).toBe("finished");
    expect(requests.filter(isSummaryCall).length).toBe(0);
    const items = result.messages.filter((m) => m.role === "compaction");
    // After the third result (about 6,100 tokens) all but the newest are cleared: about 2,100.
    expect(items.length).toBe(1);
    expect(items[0]?.role === "compaction" && items[0].summary).toBe("");
    expect(items[0]?.role === "compaction" && items[0].clearedToolResults).toEqual(["c1", "c2"]);
    const last = requests.at(-1);
    const results = last?.messages.filter((m) => m.role === "tool") ?? [];
    expect(results.map((m) => m.role === "tool" && m.content.length)).toEqual([
      "[tool result cleared to save context]".length,
      "[tool result cleared to save context]".length,
      8000,
    ]);
  });

  it("never starts the kept tail on a tool result", async () => {
    let n = 0;
    const { engine, requests } = setup({ triggerTokens: 3000, keepRecentTokens: 2100 }, (r) => {
      if (isSummaryCall(r)) return { response: { parts: [text("S")] } };
      n++;
      return n <= 2
        ? { response: { parts: [toolCall(`c${n}`, "fetch")], usage: usage(counted(r)) } }
        : { response: { parts: [text("done")] } };
    });
    await engine.runTurn({ turnId: "t1", input: [text("go")] });
    for (const r of requests.filter((x) => !isSummaryCall(x))) {
      const firstAfterSystem = r.messages.find((m) => m.role !== "system");
      expect(firstAfterSystem?.role).not.toBe("tool");
      const calls = new Set<string>();
      for (const m of r.messages) {
        if (m.role === "assistant") {
          for (const p of m.parts) if (p.type === "tool_call") calls.add(p.callId);
        }
        if (m.role === "tool") expect(calls.has(m.callId)).toBe(true);
      }
    }
  });

  it("a summary call that keeps failing ends the turn compaction_failed with nothing compacted", async () => {
    const { engine, requests } = setup({ triggerTokens: 5000 }, (r) =>
      isSummaryCall(r)
        ? { error: new ProviderError("upstream overloaded", { status: 529 }) }
        : { response: { parts: [text("unreachable")] } },
    );
    const sink = recordingSink();
    const result = await engine.runTurn({
      turnId: "t1",
      history: history(20, 4000),
      input: [text("next")],
      sink,
    });
    expect(result.outcome).toEqual({
      kind: "failed",
      reason: "compaction_failed",
      attempts: 4,
      message: "the summary call failed: upstream overloaded",
    });
    expect(requests.filter(isSummaryCall).length).toBe(4);
    expect(requests.filter((r) => !isSummaryCall(r)).length).toBe(0);
    expect(result.messages.map((m) => m.role)).toEqual(["user"]);
    expect(sink.types().filter((t) => t === "provider_retry").length).toBe(3);
    expect(sink.types()).not.toContain("context_compacted");
  });

  it("charges every summary call to the spend budgets, like the turn's own calls", async () => {
    const charged: number[] = [];
    const guard: BudgetGuard = {
      beforeModelCall: () => ({ go: true }),
      afterModelCall: (call) => {
        charged.push(call.inputTokens);
      },
    };
    const { engine, requests } = setup(
      { triggerTokens: 5000, keepRecentTokens: 1500 },
      plain,
      guard,
    );
    await engine.runTurn({ turnId: "t1", history: history(20, 4000), input: [text("next")] });
    const summaries = requests.filter(isSummaryCall).length;
    expect(summaries).toBeGreaterThan(0);
    // 900 per summary call (from the script), then 300 for the turn's own call.
    expect(charged).toEqual([...Array.from({ length: summaries }, () => 900), 300]);
  });
});
