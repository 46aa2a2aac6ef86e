// Compaction with real parts: the memory runtime, the OpenAI adapter over HTTP, and a fake
// OpenAI-compatible server that enforces a 16k context window with the real error. A 300-turn
// session with 4 KB answers never fails and the model never sees more than its window; the full
// transcript stays; fork and rewind across a compaction see the originals.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Message } from "../../../src/domain/conversation.js";
import type { SessionId } from "../../../src/domain/ids.js";
import { messagePage } from "../../../src/api/convert/transcript.js";
import { TranscriptMessage_Role as Role } from "../../../src/gen/tether/v1/transcript_pb.js";
import { decodeMessage } from "../../../src/runtime/turn/message-codec.js";
import { collect, textCommand } from "../../support/runtime-harness.js";
import { startFakeOpenAI, type FakeOpenAIServer } from "../../support/fake-openai-server.js";
import { runLongSession, type LongSessionReport } from "../../support/long-session.js";

const POLICY = { triggerTokens: 10_000, keepRecentTokens: 3_000 };
const TURNS = 300;

let server: FakeOpenAIServer;
let report: LongSessionReport;

beforeAll(async () => {
  server = await startFakeOpenAI({ contextLimit: 16_000, answerChars: 4096 });
  report = await runLongSession(server, "long", TURNS, POLICY);
}, 300_000);
afterAll(() => server.close());

const sid = (s: string) => s as SessionId;

async function transcript(sessionId: string): Promise<Message[]> {
  const snapshot = await report.harness.store.loadSession(sid(sessionId));
  return (snapshot?.messages ?? []).map(decodeMessage);
}

describe("a 300-turn session with compaction on", () => {
  it("finishes every turn and no request exceeds the model's window", () => {
    expect(report.outcomes.length).toBe(TURNS);
    expect(new Set(report.outcomes)).toEqual(new Set(["finished:assistant_message"]));
    expect(server.stats.refused).toBe(0);
    expect(server.stats.maxPromptTokens).toBeLessThanOrEqual(16_000);
    // 300 answers of about 1,300 tokens cannot fit a 16k window without compacting many times.
    expect(report.compactions.length).toBeGreaterThan(20);
    expect(server.stats.summaryCalls).toBeGreaterThanOrEqual(report.compactions.length);
  });

  it("WatchSession shows context_compacted to a watcher that was not the turn's client", async () => {
    const last = report.compactions.at(-1);
    if (last === undefined) throw new Error("no compaction");
    const watched = await collect(
      report.harness.runtime.watch(
        sid("long"),
        "long",
        last.cursor - 1,
        true,
        AbortSignal.timeout(10_000),
      ),
    );
    const seen = watched.find((e) => e.event.type === "context_compacted");
    expect(seen?.cursor).toBe(last.cursor);
    expect(seen?.event).toEqual(last.event);
    expect(last.event.tokensBefore).toBeGreaterThanOrEqual(10_000);
    expect(last.event.tokensAfter).toBeLessThan(10_000);
    expect(last.event.mode).toBe("summarize");
  });

  it("keeps every original message; the compactions sit between them as typed items", async () => {
    const messages = await transcript("long");
    const originals = messages.filter((m) => m.role !== "compaction");
    expect(originals.length).toBe(2 * TURNS);
    // The user message also names the input it carried (ADR 0037's item ids).
    expect(originals[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: "Question 1: tell me more about item 1." }],
      inputIds: [expect.any(String)],
    });
    const items = messages.filter((m) => m.role === "compaction");
    expect(items.length).toBe(report.compactions.length);
    // Each compaction covers more than the one before, and only messages before it.
    let previous = 0;
    for (const [i, m] of messages.entries()) {
      if (m.role !== "compaction") continue;
      expect(m.coversThroughMessage).toBeGreaterThan(previous);
      expect(m.coversThroughMessage).toBeLessThan(i);
      expect(m.summary.startsWith("Summary covering")).toBe(true);
      expect(m.provider).toBe("openai-chat");
      // The turns leave the model to the provider's default; the item names it all the same.
      expect(m.model).toBe("fake-16k");
      previous = m.coversThroughMessage;
    }
  });

  it("ListMessages shows compactions as ROLE_COMPACTION with their fields", async () => {
    const snapshot = await report.harness.store.loadSession(sid("long"));
    const page = messagePage(snapshot?.messages ?? [], 0, 10_000);
    const compactions = page.messages.filter((m) => m.role === Role.COMPACTION);
    expect(compactions.length).toBe(report.compactions.length);
    const first = compactions[0]?.parts[0]?.kind;
    expect(first?.case).toBe("compaction");
    if (first?.case !== "compaction") return;
    expect(first.value.provider).toBe("openai-chat");
    expect(first.value.tokensBefore).toBeGreaterThanOrEqual(10_000n);
    expect(first.value.tokensAfter).toBeLessThan(first.value.tokensBefore);
  });

  it("reports each summary call's usage apart and counts it in the session's usage", async () => {
    expect(report.summaryUsageTokens).toBeGreaterThan(0);
    const snapshot = await report.harness.store.loadSession(sid("long"));
    const total = (snapshot?.usage.inputTokens ?? 0) + (snapshot?.usage.outputTokens ?? 0);
    // The server counted everything it was sent and wrote; the session counted the same calls.
    expect(total).toBeGreaterThan(report.summaryUsageTokens);
    expect(server.stats.summaryTokens).toBe(report.summaryUsageTokens);
  });

  it("a fork before the first compaction sees no compaction, and its next turn runs", async () => {
    const first = report.compactions[0];
    expect(first).toBeDefined();
    if (first === undefined) return;
    // The revision the compacting turn committed, and the one before it.
    const compactedAt = report.revisions[first.turn - 1] ?? 0;
    const { store, runtime } = report.harness;
    await store.forkSession({
      sourceId: sid("long"),
      atRevision: compactedAt - 1,
      targetId: sid("fork-before"),
    });
    const forked = await transcript("fork-before");
    expect(forked.some((m) => m.role === "compaction")).toBe(false);
    expect(forked.length).toBe(2 * (first.turn - 1));
    const events = await collect(
      runtime.streamTurn(
        textCommand("fork-before", "and now?", { settings: { contextManagement: POLICY } }),
        AbortSignal.timeout(30_000),
      ),
    );
    const done = events.at(-1)?.event;
    expect(done?.type === "turn_completed" && done.outcome.kind).toBe("finished");
    expect(server.stats.refused).toBe(0);
  });

  it("a rewind to the compacting revision keeps the compaction; past it, the originals", async () => {
    const first = report.compactions[0];
    if (first === undefined) throw new Error("no compaction");
    const compactedAt = report.revisions[first.turn - 1] ?? 0;
    const { store, runtime } = report.harness;
    const head = (await store.loadSession(sid("long")))?.headRevision ?? 0;
    await store.rewindSession({
      sessionId: sid("long"),
      toRevision: compactedAt,
      expectedHeadRevision: head,
    });
    const rewound = await transcript("long");
    expect(rewound.filter((m) => m.role === "compaction").length).toBe(1);
    expect(rewound.filter((m) => m.role !== "compaction").length).toBe(2 * first.turn);
    const before = server.stats.calls;
    const events = await collect(
      runtime.streamTurn(
        textCommand("long", "after the rewind", { settings: { contextManagement: POLICY } }),
        AbortSignal.timeout(30_000),
      ),
    );
    const done = events.at(-1)?.event;
    expect(done?.type === "turn_completed" && done.outcome.kind).toBe("finished");
    // The summary is enough: no new compaction, one model call.
    expect(server.stats.calls - before).toBe(1);
    // The revision before the compaction is still readable whole.
    const read = await store.readRevision(sid("long"), compactedAt - 1);
    expect(read.messages.map(decodeMessage).some((m) => m.role === "compaction")).toBe(false);
  });
});

describe("a summary call that fails", () => {
  it("is retried under the provider policy, then fails the turn COMPACTION_FAILED with nothing compacted", async () => {
    const local = await startFakeOpenAI({ contextLimit: 16_000, answerChars: 4096 });
    try {
      // Eleven 4 KB answers: about 11,500 tokens by the estimate, over the 10,000 trigger.
      const warm = await runLongSession(local, "fails", 11, undefined);
      expect(new Set(warm.outcomes)).toEqual(new Set(["finished:assistant_message"]));
      const before = await warm.harness.store.loadSession(sid("fails"));
      local.failSummaries(100);
      const events = await collect(
        warm.harness.runtime.streamTurn(
          textCommand("fails", "one more", { settings: { contextManagement: POLICY } }),
          AbortSignal.timeout(60_000),
        ),
      );
      const done = events.at(-1)?.event;
      expect(done?.type === "turn_completed" && done.outcome).toMatchObject({
        kind: "failed",
        reason: "compaction_failed",
        attempts: 4,
      });
      expect(events.filter((e) => e.event.type === "provider_retry").length).toBe(3);
      expect(events.some((e) => e.event.type === "context_compacted")).toBe(false);
      const after = await warm.harness.store.loadSession(sid("fails"));
      const messages = (after?.messages ?? []).map(decodeMessage);
      expect(messages.some((m) => m.role === "compaction")).toBe(false);
      // The failed turn records its input as any failed turn does; nothing else changed.
      expect(messages.length).toBe((before?.messages.length ?? 0) + 1);
    } finally {
      await local.close();
    }
  }, 120_000);
});

describe("compaction on the Redis backend", () => {
  it("a 40-turn session compacts, never exceeds the window and keeps every original", async () => {
    const redis = new Redis(inject("redisUrl"));
    const local = await startFakeOpenAI({ contextLimit: 16_000, answerChars: 4096 });
    try {
      const r = await runLongSession(local, "on-redis", 40, POLICY, undefined, redis);
      expect(new Set(r.outcomes)).toEqual(new Set(["finished:assistant_message"]));
      expect(local.stats.refused).toBe(0);
      expect(local.stats.maxPromptTokens).toBeLessThanOrEqual(16_000);
      expect(r.compactions.length).toBeGreaterThan(2);
      const snapshot = await r.harness.store.loadSession(sid("on-redis"));
      const messages = (snapshot?.messages ?? []).map(decodeMessage);
      expect(messages.filter((m) => m.role !== "compaction").length).toBe(80);
      expect(messages.filter((m) => m.role === "compaction").length).toBe(r.compactions.length);
    } finally {
      await local.close();
      redis.disconnect();
    }
  }, 120_000);
});

describe("CompactSession (compaction on demand)", () => {
  it("compacts an idle session as its own commit; the next turn is sent the summary and the tail", async () => {
    const local = await startFakeOpenAI({ contextLimit: 16_000, answerChars: 4096 });
    try {
      const r = await runLongSession(local, "on-demand", 10, undefined);
      const { store, runtime } = r.harness;
      const before = await store.loadSession(sid("on-demand"));
      const receipt = await runtime.compactSession(sid("on-demand"), "Keep the answer numbers.");
      expect(receipt.headRevision).toBe((before?.headRevision ?? 0) + 1);
      expect(receipt.item?.summary.startsWith("Summary covering Answer 1 to Answer 3")).toBe(true);
      // The default policy keeps a quarter of 32,000 tokens: the last seven exchanges of about
      // 1,040 tokens each; the first three are summarized.
      expect(receipt.item?.coversThroughMessage).toBe(6);
      const after = await store.loadSession(sid("on-demand"));
      expect(after?.turnIndex).toBe(before?.turnIndex);
      const messages = (after?.messages ?? []).map(decodeMessage);
      expect(messages.map((m) => m.role)).toEqual([
        ...Array.from({ length: 10 }, () => ["user", "assistant"]).flat(),
        "compaction",
      ]);
      expect(after?.usage.inputTokens).toBeGreaterThan(before?.usage.inputTokens ?? 0);
      const next = await runLongSession(local, "on-demand", 1, undefined, r.harness);
      expect(next.outcomes).toEqual(["finished:assistant_message"]);
      expect(next.compactions).toEqual([]);
    } finally {
      await local.close();
    }
  });

  it("is refused while another holder runs the session", async () => {
    const local = await startFakeOpenAI({ contextLimit: 16_000, answerChars: 4096 });
    try {
      const r = await runLongSession(local, "busy", 2, undefined);
      const { store, runtime } = r.harness;
      const holder = {
        ownerId: "other-replica",
        incarnationId: "i-1",
        liveness: { kind: "opaque" as const },
      };
      const claim = await store.tryClaimLease(sid("busy"), holder, 30_000);
      expect(claim.kind).toBe("acquired");
      await expect(runtime.compactSession(sid("busy"), undefined)).rejects.toMatchObject({
        code: "turn_in_progress",
      });
      const after = await store.loadSession(sid("busy"));
      expect((after?.messages ?? []).map(decodeMessage).some((m) => m.role === "compaction")).toBe(
        false,
      );
    } finally {
      await local.close();
    }
  });
});
