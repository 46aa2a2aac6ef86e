// Provider failures: 429 and 5xx are retried with backoff that honours retry-after; other 4xx end
// the turn; a call that already streamed text is never repeated.
import { describe, expect, it } from "vitest";
import { ProviderError } from "../../../src/ports/model-provider.js";
import type { Sleep } from "../../../src/ports/sleep.js";
import { engineWith, recordingSink, text } from "./helpers.js";

const go = [{ type: "text" as const, text: "go" }];

function recordingSleep(): { sleep: Sleep; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  };
}

const ok = { response: { fullText: "fine", parts: [text("fine")] } };

describe("provider errors", () => {
  it("retries a 429 after the retry-after delay", async () => {
    const { sleep, waits } = recordingSleep();
    const { engine, provider } = engineWith(
      [{ error: new ProviderError("rate limited", { status: 429, retryAfterMs: 1500 }) }, ok],
      { sleep },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "r429", input: go, sink });

    expect(turn.outcome).toEqual({ kind: "finished", reason: "assistant_message", text: "fine" });
    expect(waits).toEqual([1500]);
    expect(provider.callCount).toBe(2);
    expect(sink.events[0]).toEqual({
      type: "provider_retry",
      iteration: 1,
      attempt: 1,
      delayMs: 1500,
      status: 429,
      reason: "rate limited",
    });
    expect(turn.iterations).toBe(1);
  });

  it("backs off exponentially on 5xx without retry-after", async () => {
    const { sleep, waits } = recordingSleep();
    const { engine } = engineWith(
      [
        { error: new ProviderError("unavailable", { status: 503 }) },
        { error: new ProviderError("bad gateway", { status: 502 }) },
        { error: new ProviderError("server error", { status: 500 }) },
        ok,
      ],
      { sleep, random: () => 0 },
    );
    const turn = await engine.runTurn({ turnId: "r5xx", input: go });

    expect(turn.outcome.kind).toBe("finished");
    // Half of 500, 1000, 2000 ms: the lower edge of the jitter window.
    expect(waits).toEqual([250, 500, 1000]);
  });

  it("fails after the last attempt", async () => {
    const { sleep, waits } = recordingSleep();
    const overloaded = (): { error: ProviderError } => ({
      error: new ProviderError("overloaded", { status: 529 }),
    });
    const { engine, provider } = engineWith(
      [overloaded(), overloaded(), overloaded(), overloaded(), ok],
      { sleep, random: () => 1 },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "exhausted", input: go, sink });

    expect(turn.outcome).toEqual({
      kind: "failed",
      reason: "provider_error",
      status: 529,
      retryable: true,
      attempts: 4,
      message: "overloaded",
    });
    expect(provider.callCount).toBe(4);
    expect(waits).toEqual([500, 1000, 2000]);
    expect(sink.types().filter((t) => t === "terminal")).toHaveLength(1);
  });

  it("does not retry other 4xx responses", async () => {
    const { sleep, waits } = recordingSleep();
    const { engine, provider } = engineWith(
      [{ error: new ProviderError("invalid request: bad schema", { status: 400 }) }, ok],
      { sleep },
    );
    const turn = await engine.runTurn({ turnId: "r400", input: go });

    expect(turn.outcome).toEqual({
      kind: "failed",
      reason: "provider_error",
      status: 400,
      retryable: false,
      attempts: 1,
      message: "invalid request: bad schema",
    });
    expect(waits).toEqual([]);
    expect(provider.callCount).toBe(1);
  });

  it("does not wait out a retry-after beyond the policy's limit", async () => {
    const { sleep, waits } = recordingSleep();
    const { engine } = engineWith(
      [{ error: new ProviderError("slow down", { status: 429, retryAfterMs: 600_000 }) }, ok],
      { sleep },
    );
    const turn = await engine.runTurn({ turnId: "long-wait", input: go });

    expect(turn.outcome.kind).toBe("failed");
    expect(waits).toEqual([]);
  });

  it("does not repeat a call that failed after streaming text", async () => {
    const { sleep, waits } = recordingSleep();
    const { engine, provider } = engineWith(
      [
        {
          events: [{ type: "text_delta", text: "Half an ans" }],
          error: new ProviderError("connection reset"),
        },
        ok,
      ],
      { sleep },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "midstream", input: go, sink });

    expect(turn.outcome).toEqual({
      kind: "failed",
      reason: "provider_error",
      retryable: true,
      attempts: 1,
      message: "connection reset",
    });
    expect(provider.callCount).toBe(1);
    expect(waits).toEqual([]);
    expect(turn.messages.at(-1)).toEqual({ role: "assistant", parts: [text("Half an ans")] });
    expect(sink.types()).toEqual(["text_delta", "terminal"]);
  });

  it("retries a transport failure before any output", async () => {
    const { sleep, waits } = recordingSleep();
    const { engine } = engineWith([{ error: new ProviderError("socket hang up") }, ok], {
      sleep,
      random: () => 0,
    });
    const turn = await engine.runTurn({ turnId: "transport", input: go });

    expect(turn.outcome.kind).toBe("finished");
    expect(waits).toEqual([250]);
  });

  it("ends as cancelled when cancelled during a backoff", async () => {
    const cancel = new AbortController();
    const sleep: Sleep = (_ms, signal) =>
      new Promise((_, reject) => {
        signal?.addEventListener("abort", () => reject(new Error("aborted")));
        cancel.abort();
      });
    const { engine, provider } = engineWith(
      [{ error: new ProviderError("busy", { status: 503 }) }, ok],
      { sleep },
    );
    const turn = await engine.runTurn({
      turnId: "cancel-backoff",
      input: go,
      signal: cancel.signal,
    });

    expect(turn.outcome).toEqual({ kind: "stopped", reason: "cancelled" });
    expect(provider.callCount).toBe(1);
  });

  it("fails as internal when the sink throws mid-turn, still emitting one terminal event", async () => {
    const { engine } = engineWith([
      { events: [{ type: "text_delta", text: "a" }], response: { fullText: "a" } },
    ]);
    const seen: string[] = [];
    const turn = await engine.runTurn({
      turnId: "sink",
      input: go,
      sink: {
        emit: (event) => {
          seen.push(event.type);
          if (event.type === "usage") throw new Error("log append failed");
        },
      },
    });

    expect(turn.outcome).toEqual({
      kind: "failed",
      reason: "internal",
      message: "log append failed",
    });
    expect(seen).toEqual(["text_delta", "usage", "terminal"]);
  });
});
