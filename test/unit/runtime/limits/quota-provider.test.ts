// The quota decorator of the model provider (ADR 0015): each call's real usage is charged to the
// tenant; a later call of the turn waits while a token limit is used up (abortably), and goes on
// once its window frees. The memory quota store on a manual clock stands in for the shared one.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import { usage } from "../../../../src/domain/usage.js";
import { createManualClock } from "../../../../src/ports/clock.js";
import type { ModelProvider, ModelRequest } from "../../../../src/ports/model-provider.js";
import { silentLogger, type RuntimeDeps } from "../../../../src/runtime/deps.js";
import { withQuotaCounting } from "../../../../src/runtime/limits/quota-provider.js";
import { createMemoryQuotaStore } from "../../../../src/store/memory/quota-ops.js";

/** Each call streams a usage snapshot and answers with no final usage (the stream's counts). */
const model: ModelProvider = {
  name: "fixed",
  capabilities: { images: false },
  call() {
    return (async function* () {
      yield {
        type: "usage" as const,
        usage: usage({ inputTokens: 30, outputTokens: 20, cacheReadTokens: 10 }),
      };
      return { fullText: "ok", parts: [{ type: "text" as const, text: "ok" }] };
    })();
  },
};

function setup(inner: ModelProvider = model) {
  const clock = createManualClock(0);
  const store = createMemoryQuotaStore({ clock });
  const waits: number[] = [];
  const deps = {
    quotas: {
      store,
      config: {
        tenants: { acme: { tokens_per_minute: { max: 100, mode: "queue" as const } } },
        default: undefined,
      },
    },
    logger: silentLogger,
    sleep: (ms: number, signal?: AbortSignal) => {
      if (signal?.aborted) return Promise.reject(signal.reason as Error);
      waits.push(ms);
      clock.advance(ms);
      return Promise.resolve();
    },
  } as unknown as RuntimeDeps;
  const provider = withQuotaCounting(deps, "acme:s-1" as SessionId, inner);
  return { store, waits, provider, clock };
}

async function drain(provider: ModelProvider, signal = new AbortController().signal) {
  const request: ModelRequest = { messages: [], tools: [], options: {}, signal };
  const call = provider.call(request);
  for (;;) {
    const step = await call.next();
    if (step.done === true) return step.value;
  }
}

describe("quota charging provider", () => {
  test("charges input + output + cache tokens of each call", async () => {
    const { store, provider } = setup();
    await drain(provider);
    await drain(provider);
    expect((await store.readQuotaUsage("acme")).tokensThisMinute).toBe(120);
    expect((await store.readQuotaUsage("acme")).tokensToday).toBe(120);
  });

  test("a later call waits while the minute's tokens are used up, then goes on in the next window", async () => {
    const { store, provider, waits } = setup();
    await drain(provider);
    await store.countTokens("acme", 50);
    // 110 of 100 used: the second call of the turn waits the 60 s window out, then runs.
    expect(await drain(provider)).toMatchObject({ fullText: "ok" });
    expect(waits).toEqual([
      5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000,
    ]);
    expect((await store.readQuotaUsage("acme")).tokensThisMinute).toBe(60);
  });

  test("the wait ends with the turn's abort", async () => {
    const { store, provider } = setup();
    await drain(provider);
    await store.countTokens("acme", 100);
    const abort = new AbortController();
    abort.abort(new Error("turn cancelled"));
    await expect(drain(provider, abort.signal)).rejects.toThrow("turn cancelled");
  });

  test("the provider's own compaction is charged and waits like any call", async () => {
    const compacted = { summary: "s", native: "{}", model: "m" };
    const native = {
      modelOf: () => "m",
      compact: () =>
        Promise.resolve({ ...compacted, usage: usage({ inputTokens: 70, outputTokens: 40 }) }),
    };
    const { store, provider, waits } = setup({
      ...model,
      defaultModel: "m",
      nativeCompaction: native,
    });
    expect(provider.defaultModel).toBe("m");
    const request = { messages: [], tools: [], options: {}, instructions: undefined };
    const signal = new AbortController().signal;
    expect(await provider.nativeCompaction?.compact({ ...request, signal })).toMatchObject(
      compacted,
    );
    expect((await store.readQuotaUsage("acme")).tokensThisMinute).toBe(110);
    // 110 of 100 used: the turn's next call waits for the next window.
    await drain(provider);
    expect(waits.length).toBeGreaterThan(0);
  });

  test("a tenant without quotas gets the provider itself", () => {
    const deps = {
      quotas: {
        store: createMemoryQuotaStore({ clock: createManualClock() }),
        config: { tenants: {}, default: undefined },
      },
    } as unknown as RuntimeDeps;
    expect(withQuotaCounting(deps, "other:s" as SessionId, model)).toBe(model);
  });
});
