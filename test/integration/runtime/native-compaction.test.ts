// Compaction mode native over the wire: the memory runtime, the Anthropic adapter over HTTP, and
// a fake Anthropic server with a 16k window that serves the compaction beta as the SDK types it.
// The native path sends the provider's own fields (checked on the wire, headers and body), keeps
// the signed block on the item and sends it back only to the model that made it; another model
// is sent the summary's text; a provider without its own compaction summarizes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContextManagement } from "../../../src/domain/compaction.js";
import type { CompactionItem, Message } from "../../../src/domain/conversation.js";
import type { SessionId } from "../../../src/domain/ids.js";
import { createAnthropicMessagesProvider } from "../../../src/providers/anthropic-messages.js";
import type { RuntimeMetrics } from "../../../src/runtime/deps.js";
import { decodeMessage } from "../../../src/runtime/turn/message-codec.js";
import {
  signatureOf,
  startFakeAnthropic,
  type FakeAnthropicServer,
  type RecordedRequest,
} from "../../support/fake-anthropic-server.js";
import { startFakeOpenAI } from "../../support/fake-openai-server.js";
import { runLongSession } from "../../support/long-session.js";
import {
  collect,
  createRuntimeHarness,
  textCommand,
  type RuntimeHarness,
} from "../../support/runtime-harness.js";

const NATIVE: ContextManagement = {
  triggerTokens: 10_000,
  keepRecentTokens: 3_000,
  mode: "native",
};
const TURNS = 40;
const sid = (s: string) => s as SessionId;

let server: FakeAnthropicServer;
let harness: RuntimeHarness;
const outcomes: string[] = [];
const modes: string[] = [];

function anthropicHarness(baseURL: string, metrics?: RuntimeMetrics): RuntimeHarness {
  return createRuntimeHarness({
    provider: createAnthropicMessagesProvider({
      apiKey: "test-key",
      baseURL,
      defaultModel: "claude-fake-16k",
    }),
    ...(metrics && { metrics }),
  });
}

async function turn(h: RuntimeHarness, session: string, text: string, settings = {}) {
  const events = await collect(
    h.runtime.streamTurn(textCommand(session, text, { settings }), AbortSignal.timeout(30_000)),
  );
  for (const { event } of events) if (event.type === "context_compacted") modes.push(event.mode);
  const done = events.at(-1)?.event;
  return done?.type === "turn_completed" ? `${done.outcome.kind}:${done.outcome.reason}` : "none";
}

async function transcript(h: RuntimeHarness, session: string): Promise<Message[]> {
  return ((await h.store.loadSession(sid(session)))?.messages ?? []).map(decodeMessage);
}

const compactions = (messages: Message[]) =>
  messages.filter((m): m is CompactionItem => m.role === "compaction");

beforeAll(async () => {
  server = await startFakeAnthropic({ contextLimit: 16_000, answerChars: 4096 });
  harness = anthropicHarness(server.baseURL);
  for (let i = 1; i <= TURNS; i++) {
    outcomes.push(
      await turn(harness, "native", `Question ${i}: tell me more about item ${i}.`, {
        contextManagement: NATIVE,
      }),
    );
  }
}, 120_000);
afterAll(() => server.close());

const compactionRequests = (): RecordedRequest[] =>
  server.requests.filter((r) => r.body.compaction !== undefined);

describe("mode native against Anthropic", () => {
  it("runs every turn inside the window, compacting with the provider's own compaction", async () => {
    expect(new Set(outcomes)).toEqual(new Set(["finished:assistant_message"]));
    expect(server.stats.refused).toBe(0);
    expect(server.stats.errors).toEqual([]);
    expect(server.stats.maxPromptTokens).toBeLessThanOrEqual(16_000);
    expect(server.stats.summaryCalls).toBe(0);
    expect(server.stats.compactions).toBeGreaterThanOrEqual(3);
    const items = compactions(await transcript(harness, "native"));
    expect(items.length).toBe(server.stats.compactions);
    expect(new Set(modes)).toEqual(new Set(["native"]));
    for (const item of items) {
      expect(item.mode).toBe("native");
      expect(item.provider).toBe("anthropic-messages");
      expect(item.model).toBe("claude-fake-16k");
      expect(item.summary.startsWith("Compacted covering Answer")).toBe(true);
      expect(JSON.parse(item.native ?? "{}")).toMatchObject({
        content: item.summary,
        signature: signatureOf(item.summary, "claude-fake-16k"),
      });
    }
  });

  it("sends a compaction request with the beta header and the compaction field, nothing else", () => {
    const first = compactionRequests()[0];
    expect(first?.headers["anthropic-beta"]).toBe("compact-2026-09-04");
    expect(first?.body.compaction).toEqual({ type: "summarize" });
    expect(first?.body.context_management).toBeUndefined();
    expect(first?.body.stream).toBeUndefined();
    expect(first?.body.model).toBe("claude-fake-16k");
    // Its output is capped at an eighth of the trigger, as Tether's own summaries are.
    expect(first?.body.max_tokens).toBe(1_250);
    expect(first?.body.messages[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: "Question 1: tell me more about item 1." }],
    });
    // Calls before the first compaction carry no beta.
    const before = server.requests.slice(0, server.requests.indexOf(first as RecordedRequest));
    expect(before.length).toBeGreaterThan(5);
    expect(before.every((r) => r.headers["anthropic-beta"] === undefined)).toBe(true);
  });

  it("sends the block back first, verbatim, with the beta header; a later compaction adopts it", () => {
    const [first, second] = compactionRequests();
    const at = server.requests.indexOf(first as RecordedRequest);
    const next = server.requests[at + 1];
    expect(next?.body.stream).toBe(true);
    expect(next?.headers["anthropic-beta"]).toBe("compact-2026-09-04");
    const summary = "Compacted covering Answer 1 to Answer ";
    const lead = next?.body.messages[0];
    expect(lead?.role).toBe("assistant");
    const block = Array.isArray(lead?.content) ? lead.content[0] : undefined;
    expect(block).toMatchObject({ type: "compaction", encrypted_content: "enc-1" });
    expect(String(block?.content).startsWith(summary)).toBe(true);
    expect(block?.signature).toBe(signatureOf(String(block?.content), "claude-fake-16k"));
    // The second compaction request starts from the first block, not from the originals.
    const adopted = second?.body.messages[0];
    expect(Array.isArray(adopted?.content) && adopted.content[0]).toMatchObject({
      type: "compaction",
      encrypted_content: "enc-1",
    });
  });

  it("a turn on another model is sent the summary as text, without the block or the beta", async () => {
    const items = compactions(await transcript(harness, "native"));
    const latest = items.at(-1);
    const from = server.requests.length;
    const outcome = await turn(harness, "native", "Question on another model.", {
      model: "claude-other",
      contextManagement: NATIVE,
    });
    expect(outcome).toBe("finished:assistant_message");
    const sent = server.requests.slice(from).filter((r) => r.body.compaction === undefined);
    expect(sent.length).toBe(1);
    expect(sent[0]?.body.model).toBe("claude-other");
    expect(sent[0]?.headers["anthropic-beta"]).toBeUndefined();
    expect(sent[0]?.body.messages[0]?.role).toBe("user");
    const first = sent[0]?.body.messages[0]?.content;
    expect(Array.isArray(first) && first[0]).toEqual({
      type: "text",
      text: `Summary of the earlier conversation:\n${latest?.summary ?? ""}`,
    });
    const json = JSON.stringify(sent[0]?.body.messages);
    expect(json.includes('"type":"compaction"')).toBe(false);
    expect(server.stats.errors).toEqual([]);
  });
});

describe("mode native behind the runtime's provider wrappers", () => {
  it("with model-call metrics on, a turn still compacts with the provider's own compaction", async () => {
    const measured = await startFakeAnthropic({ contextLimit: 16_000, answerChars: 4096 });
    const calls: string[] = [];
    const compacted: string[] = [];
    const metrics: RuntimeMetrics = {
      countTurn: () => undefined,
      countLeaseClaim: () => undefined,
      addProviderTokens: () => undefined,
      observeModelCall: (report) => calls.push(report.provider),
      countCompaction: (mode) => compacted.push(mode),
    };
    try {
      const h = anthropicHarness(measured.baseURL, metrics);
      for (let i = 1; i <= 11; i++) await turn(h, "measured", `Question ${i}.`);
      const outcome = await turn(h, "measured", "Question 12.", { contextManagement: NATIVE });
      expect(outcome).toBe("finished:assistant_message");
      expect(calls.length).toBe(12);
      expect(compacted).toEqual(["native"]);
      expect(measured.stats.compactions).toBeGreaterThanOrEqual(1);
      expect(measured.stats.summaryCalls).toBe(0);
      const items = compactions(await transcript(h, "measured"));
      expect(items.map((i) => [i.mode, i.model])).toEqual([["native", "claude-fake-16k"]]);
    } finally {
      await measured.close();
    }
  }, 60_000);
});

describe("fallbacks to summarize", () => {
  it("a provider without its own compaction (OpenAI chat completions) summarizes in mode native", async () => {
    const openai = await startFakeOpenAI({ contextLimit: 16_000, answerChars: 4096 });
    try {
      const report = await runLongSession(openai, "openai-native", 14, NATIVE);
      expect(new Set(report.outcomes)).toEqual(new Set(["finished:assistant_message"]));
      expect(report.compactions.map((c) => c.event.mode)).toEqual(["summarize"]);
      const items = compactions(await transcript(report.harness, "openai-native"));
      expect(items.map((i) => [i.mode, i.provider, i.native])).toEqual([
        ["summarize", "openai-chat", undefined],
      ]);
      expect(openai.stats.summaryCalls).toBeGreaterThanOrEqual(1);
    } finally {
      await openai.close();
    }
  }, 60_000);

  it("mode auto summarizes when the provider refuses its compaction; mode native fails the turn", async () => {
    const refusing = await startFakeAnthropic({
      contextLimit: 16_000,
      answerChars: 4096,
      refuseCompactions: true,
    });
    try {
      const h = anthropicHarness(refusing.baseURL);
      for (let i = 1; i <= 11; i++) await turn(h, "refused", `Question ${i}.`);
      const native = await turn(h, "refused", "Question 12.", { contextManagement: NATIVE });
      expect(native).toBe("failed:compaction_failed");
      expect(compactions(await transcript(h, "refused"))).toEqual([]);
      const auto = await turn(h, "refused", "Question 13.", {
        contextManagement: { ...NATIVE, mode: "auto" },
      });
      expect(auto).toBe("finished:assistant_message");
      const items = compactions(await transcript(h, "refused"));
      expect(items.map((i) => [i.mode, i.provider, i.native])).toEqual([
        ["summarize", "anthropic-messages", undefined],
      ]);
      expect(refusing.stats.summaryCalls).toBeGreaterThanOrEqual(1);
      expect(refusing.stats.refused).toBe(0);
    } finally {
      await refusing.close();
    }
  }, 60_000);
});
