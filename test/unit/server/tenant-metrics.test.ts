// Per-tenant and GenAI metrics after real turns on the memory runtime: label values bounded by
// the configuration, histogram observations read back from the registry.
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { ProviderError } from "../../../src/ports/model-provider.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { createMetricLabels, defaultModelOf } from "../../../src/server/metric-labels.js";
import { createMetrics } from "../../../src/server/metrics.js";
import { loadConfig } from "../../../src/server/config.js";
import { metricLabelsOf } from "../../../src/server/metric-labels.js";
import { collect, createRuntimeHarness, textCommand } from "../../support/runtime-harness.js";
import { metricLabelSets, metricValue } from "../../support/metric-values.js";
import { waitFor } from "../../support/wait-for.js";

const signal = () => AbortSignal.timeout(10_000);
const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});

const labels = createMetricLabels({
  tenants: ["acme"],
  models: ["big-model"],
  defaultModel: "small-model",
});

describe("metric labels", () => {
  it("keep configured tenants and models and report every other one as other", () => {
    expect(labels.tenantOf("acme:s1")).toBe("acme");
    expect(labels.tenantOf("intruder:s1")).toBe("other");
    expect(labels.tenantOf("no-prefix")).toBe("default");
    expect(labels.modelOf(undefined)).toBe("small-model");
    expect(labels.modelOf("big-model")).toBe("big-model");
    expect(labels.modelOf("made-up-by-a-client")).toBe("other");
    expect(labels.tenants).toEqual(["acme", "default"]);
    expect(labels.models).toEqual(["big-model", "small-model"]);
  });

  it("come from TETHER_API_KEYS, TETHER_METRICS_TENANTS, TETHER_METRICS_MODELS and the provider", () => {
    const config = loadConfig({
      TETHER_API_KEYS: "k1=alpha,k2=beta",
      TETHER_METRICS_TENANTS: "gamma",
      TETHER_METRICS_MODELS: "gpt-4.1,claude-x",
      TETHER_PROVIDER: "openai",
      TETHER_OPENAI_API_KEY: "sk-test",
      TETHER_MODEL: "gpt-4o",
    });
    const bounded = metricLabelsOf(config);
    expect(bounded.tenants).toEqual(["alpha", "beta", "default", "gamma"]);
    expect(bounded.models).toEqual(["claude-x", "gpt-4.1", "gpt-4o"]);
    expect(defaultModelOf({ kind: "echo" })).toBe("echo");
    expect(
      defaultModelOf({ kind: "anthropic", apiKey: "k", baseUrl: undefined, model: undefined }),
    ).toBe("claude-3-5-haiku-latest");
  });
});

describe("tenant and GenAI metrics after a turn", () => {
  it("observe each model call of a turn with a tool call, the turn's outcome and duration", async () => {
    const metrics = createMetrics({ defaultMetrics: false, labels });
    const provider = createScriptedProvider({
      script: [
        {
          response: {
            parts: [{ type: "tool_call", callId: "c1", toolName: "lookup", argumentsJson: "{}" }],
            usage: usage(10, 5),
          },
        },
        {
          events: [{ type: "text_delta", text: "done" }],
          response: { fullText: "done", usage: usage(20, 3) },
        },
      ],
    });
    const { runtime } = createRuntimeHarness({
      provider,
      metrics,
      serverTools: {
        definitions: () => [
          { name: "lookup", description: "looks", inputSchema: { type: "object" } },
        ],
        execute: () => Promise.resolve({ output: "found" }),
      },
    });
    const events = await collect(runtime.streamTurn(textCommand("acme:s1", "go"), signal()));
    expect(events.at(-1)?.event.type).toBe("turn_completed");
    const { registry } = metrics;
    const call = { tenant: "acme", provider: "scripted", model: "small-model" };

    const input = { ...call, token_type: "input" };
    expect(await metricValue(registry, "gen_ai_client_token_usage_count", input)).toBe(2);
    expect(await metricValue(registry, "gen_ai_client_token_usage_sum", input)).toBe(30);
    expect(
      await metricValue(registry, "gen_ai_client_token_usage_bucket", { ...input, le: 16 }),
    ).toBe(1);
    expect(
      await metricValue(registry, "gen_ai_client_token_usage_bucket", { ...input, le: 64 }),
    ).toBe(2);
    const output = { ...call, token_type: "output" };
    expect(await metricValue(registry, "gen_ai_client_token_usage_count", output)).toBe(2);
    expect(await metricValue(registry, "gen_ai_client_token_usage_sum", output)).toBe(8);
    expect(
      await metricValue(registry, "gen_ai_client_token_usage_bucket", { ...output, le: 4 }),
    ).toBe(1);

    expect(await metricLabelSets(registry, "gen_ai_client_operation_duration_seconds")).toEqual([
      call,
    ]);
    expect(
      await metricValue(registry, "gen_ai_client_operation_duration_seconds_count", call),
    ).toBe(2);
    // Only the second call streamed an event.
    expect(
      await metricValue(registry, "tether_model_time_to_first_chunk_seconds_count", call),
    ).toBe(1);

    const turn = { tenant: "acme", outcome: "finished", reason: "assistant_message" };
    expect(await metricValue(registry, "tether_tenant_turns_total", turn)).toBe(1);
    expect(await metricLabelSets(registry, "tether_turn_duration_seconds")).toEqual([
      { tenant: "acme", end: "finished" },
    ]);
    // The existing totals still count.
    expect(await metricValue(registry, "tether_turns_total", { outcome: "finished" })).toBe(1);
    expect(await metricValue(registry, "tether_provider_tokens_total", { kind: "input" })).toBe(30);
  });

  it("name a failed call's error type and report an unconfigured tenant as other", async () => {
    const metrics = createMetrics({ defaultMetrics: false, labels });
    const provider = createScriptedProvider({
      script: [{ error: new ProviderError("bad request", { status: 400 }) }],
    });
    const { runtime } = createRuntimeHarness({ provider, metrics });
    await collect(
      runtime.streamTurn(
        textCommand("intruder:s1", "go", { settings: { model: "exotic" } }),
        signal(),
      ),
    );
    const { registry } = metrics;
    expect(await metricLabelSets(registry, "gen_ai_client_operation_duration_seconds")).toEqual([
      { tenant: "other", provider: "scripted", model: "other", error_type: "400" },
    ]);
    expect(await metricLabelSets(registry, "gen_ai_client_token_usage")).toEqual([]);
    const turn = { tenant: "other", outcome: "failed", reason: "provider_error" };
    expect(await metricValue(registry, "tether_tenant_turns_total", turn)).toBe(1);
  });
});

describe("parked turns and queue depth by tenant", () => {
  it("count a turn that parks on a client tool and resumes when answered", async () => {
    const metrics = createMetrics({ defaultMetrics: false, labels });
    const provider = createScriptedProvider({
      script: [
        {
          response: {
            parts: [{ type: "tool_call", callId: "c1", toolName: "ask", argumentsJson: "{}" }],
          },
        },
        { response: { fullText: "thanks", parts: [{ type: "text", text: "thanks" }] } },
      ],
    });
    const { runtime } = createRuntimeHarness({ provider, metrics, parkAfterMs: 0 });
    const { registry } = metrics;
    const ends: string[] = [];
    const stream = runtime.streamTurn(
      textCommand("acme:p1", "ask me", {
        clientTools: [{ name: "ask", description: "asks", inputSchema: { type: "object" } }],
      }),
      signal(),
    );
    for await (const item of stream) {
      ends.push(item.event.type);
      if (item.event.type !== "turn_parked") continue;
      // The run that parked is reported once the driver has its end.
      await waitFor(
        async () => (await metricValue(registry, "tether_parked_turns", { tenant: "acme" })) === 1,
        { what: "tether_parked_turns to count the parked run" },
      );
      expect(await metricValue(registry, "tether_turn_parks_total", { tenant: "acme" })).toBe(1);
      await runtime.submitToolResults("acme:p1" as SessionId, item.turnId, [
        { callId: "c1", output: "yes", isError: false },
      ]);
    }
    expect(ends).toContain("turn_resumed");
    expect(ends.at(-1)).toBe("turn_completed");
    await waitFor(
      async () =>
        (await metricValue(registry, "tether_turn_duration_seconds_count", { end: "finished" })) ===
        1,
      { what: "the finished turn's duration sample" },
    );
    expect(await metricLabelSets(registry, "tether_turn_duration_seconds")).toEqual([
      { tenant: "acme", end: "parked" },
      { tenant: "acme", end: "finished" },
    ]);
    expect(
      await metricValue(registry, "tether_turn_resumes_total", {
        tenant: "acme",
        status: "answered",
      }),
    ).toBe(1);
    expect(await metricValue(registry, "tether_parked_turns", { tenant: "acme" })).toBe(0);
    // Two model calls: the one that asked, and the one after the answer on resume.
    expect(
      await metricValue(registry, "gen_ai_client_operation_duration_seconds_count", {
        tenant: "acme",
      }),
    ).toBe(2);
  });

  it("count parks and resumes; the gauge is parks minus resumes seen here", async () => {
    const metrics = createMetrics({ defaultMetrics: false, labels });
    const s1 = "acme:s1" as SessionId;
    const s2 = "acme:s2" as SessionId;
    const ended = { kind: "ended", outcome: undefined, seconds: 2 } as const;
    metrics.observeTurn({ ...ended, sessionId: s1, end: "parked" });
    metrics.observeTurn({ ...ended, sessionId: s2, end: "parked" });
    metrics.observeTurn({ kind: "resumed", sessionId: s1, status: "answered" });
    const { registry } = metrics;
    expect(await metricValue(registry, "tether_turn_parks_total", { tenant: "acme" })).toBe(2);
    expect(
      await metricValue(registry, "tether_turn_resumes_total", {
        tenant: "acme",
        status: "answered",
      }),
    ).toBe(1);
    expect(await metricValue(registry, "tether_parked_turns", { tenant: "acme" })).toBe(1);
    expect(
      await metricValue(registry, "tether_turn_duration_seconds_bucket", {
        end: "parked",
        le: 2.5,
      }),
    ).toBe(2);
  });

  it("count the sessions a sweep found due by tenant, replacing the last count", async () => {
    const metrics = createMetrics({ defaultMetrics: false, labels });
    metrics.setReadySessions(["acme:a", "acme:b", "x:c", "d"]);
    metrics.setReadySessions(["acme:a", "y:c", "z:c"]);
    expect(await metricLabelSets(metrics.registry, "tether_tenant_queue_depth")).toEqual([
      { tenant: "acme" },
      { tenant: "other" },
    ]);
    expect(
      await metricValue(metrics.registry, "tether_tenant_queue_depth", { tenant: "acme" }),
    ).toBe(1);
    expect(
      await metricValue(metrics.registry, "tether_tenant_queue_depth", { tenant: "other" }),
    ).toBe(2);
  });
});
