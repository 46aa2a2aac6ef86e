// The model call decorator: what it reports for a call that streams and ends, one that fails, one
// the engine stops reading, on a clock the test steps.
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import { ProviderError, type ModelRequest } from "../../../../src/ports/model-provider.js";
import { createScriptedProvider, type ScriptedCall } from "../../../../src/providers/scripted.js";
import type { ModelCallReport } from "../../../../src/runtime/deps.js";
import { withModelCallMetrics } from "../../../../src/runtime/observation/model-call-metrics.js";

const usage = (input: number, output: number, cacheRead = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});

function measured(script: ScriptedCall[]) {
  const reports: ModelCallReport[] = [];
  const ticks = [10, 10.25, 11.5, 12];
  let tick = 0;
  const provider = withModelCallMetrics(
    createScriptedProvider({ script }),
    {
      countTurn: () => undefined,
      countLeaseClaim: () => undefined,
      addProviderTokens: () => undefined,
      observeModelCall: (report) => reports.push(report),
    },
    "acme:s1" as SessionId,
    () => ticks[tick++] ?? 99,
  );
  return { provider, reports };
}

const request = (model?: string): ModelRequest => ({
  messages: [],
  tools: [],
  options: model === undefined ? {} : { model },
  signal: new AbortController().signal,
});

describe("withModelCallMetrics", () => {
  it("reports duration, time to the first event and the final usage with cache reads as input", async () => {
    const { provider, reports } = measured([
      {
        events: [
          { type: "text_delta", text: "a" },
          { type: "usage", usage: usage(1, 1) },
        ],
        response: { fullText: "a", usage: usage(7, 2, 3) },
      },
    ]);
    const call = provider.call(request("m1"));
    expect((await call.next()).done).toBe(false);
    expect((await call.next()).done).toBe(false);
    expect((await call.next()).done).toBe(true);
    expect(reports).toEqual([
      {
        sessionId: "acme:s1",
        provider: "scripted",
        model: "m1",
        seconds: 1.5,
        firstChunkSeconds: 0.25,
        inputTokens: 10,
        outputTokens: 2,
        errorType: undefined,
      },
    ]);
  });

  it("falls back to the streamed usage and names a failure by its status", async () => {
    const { provider, reports } = measured([
      {
        events: [{ type: "usage", usage: usage(4, 0) }],
        error: new ProviderError("overloaded", { status: 529 }),
      },
    ]);
    const call = provider.call(request());
    await call.next();
    await expect(call.next()).rejects.toThrow("overloaded");
    expect(reports).toEqual([
      {
        sessionId: "acme:s1",
        provider: "scripted",
        model: undefined,
        seconds: 1.5,
        firstChunkSeconds: 0.25,
        inputTokens: 4,
        outputTokens: 0,
        errorType: "529",
      },
    ]);
  });

  it("reports a call the reader stopped as cancelled, once", async () => {
    const { provider, reports } = measured([{ events: [{ type: "text_delta", text: "a" }] }]);
    const call = provider.call(request());
    await call.next();
    await call.return?.();
    await call.next();
    expect(reports.map((r) => [r.errorType, r.seconds])).toEqual([["cancelled", 1.5]]);
  });

  it("leaves the provider as it is when nothing listens", () => {
    const provider = createScriptedProvider({ script: [] });
    expect(withModelCallMetrics(provider, undefined, "s" as SessionId)).toBe(provider);
  });
});
