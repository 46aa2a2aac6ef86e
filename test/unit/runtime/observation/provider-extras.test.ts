// The provider wrappers a turn's calls go through (model-call metrics, traces) pass the
// provider's default model and its own compaction through: without them mode native would
// quietly become summarize on a server with metrics or tracing on, and compaction items would
// lose their model. (Quota charging wraps the compaction instead: quota-provider.test.ts.)
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import type { ModelProvider, NativeCompaction } from "../../../../src/ports/model-provider.js";
import type { TraceSpan, Tracer } from "../../../../src/ports/tracer.js";
import type { RuntimeMetrics } from "../../../../src/runtime/deps.js";
import { traceProvider } from "../../../../src/runtime/observation/call-trace.js";
import { withModelCallMetrics } from "../../../../src/runtime/observation/model-call-metrics.js";

const native: NativeCompaction = {
  modelOf: () => "claude-x",
  compact: () => Promise.reject(new Error("not called here")),
};
const provider: ModelProvider = {
  name: "anthropic-messages",
  capabilities: { images: true },
  defaultModel: "claude-x",
  nativeCompaction: native,
  call: () => {
    throw new Error("not called here");
  },
};
const bare: ModelProvider = {
  name: "openai-chat",
  capabilities: { images: true },
  call: provider.call,
};

const metrics = { observeModelCall: () => undefined } as unknown as RuntimeMetrics;
const tracer = {} as Tracer;
const turnSpan = {} as TraceSpan;

describe("provider wrappers", () => {
  it("model-call metrics keep the default model and the native compaction", () => {
    const wrapped = withModelCallMetrics(provider, metrics, "t:s" as SessionId);
    expect(wrapped).not.toBe(provider);
    expect(wrapped.defaultModel).toBe("claude-x");
    expect(wrapped.nativeCompaction).toBe(native);
  });

  it("traces keep the default model and the native compaction", () => {
    const wrapped = traceProvider(tracer, provider, new Map(), turnSpan);
    expect(wrapped.defaultModel).toBe("claude-x");
    expect(wrapped.nativeCompaction).toBe(native);
  });

  it("add neither to a provider that has none", () => {
    for (const wrapped of [
      withModelCallMetrics(bare, metrics, "t:s" as SessionId),
      traceProvider(tracer, bare, new Map(), turnSpan),
    ]) {
      expect("defaultModel" in wrapped).toBe(false);
      expect("nativeCompaction" in wrapped).toBe(false);
    }
  });
});
