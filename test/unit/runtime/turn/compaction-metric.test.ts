// A committed turn that compacted counts in tether_compactions_total, by mode.
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../../../src/server/metrics.js";
import type { RuntimeDeps } from "../../../../src/runtime/deps.js";
import { silentLogger } from "../../../../src/runtime/deps.js";
import { reportCommitted } from "../../../../src/runtime/turn/turn-commit.js";
import type { SessionId } from "../../../../src/domain/ids.js";
import { ZERO_USAGE } from "../../../../src/domain/usage.js";

describe("compaction metric", () => {
  it("counts each compaction a committed turn made", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const deps = {
      metrics,
      provider: { name: "p" },
      logger: silentLogger,
    } as unknown as RuntimeDeps;
    const compaction = {
      role: "compaction" as const,
      coversThroughMessage: 4,
      summary: "s",
      provider: "p",
      model: "m",
      tokensBefore: 12_000,
      tokensAfter: 2_000,
      clearedToolResults: [],
      mode: "summarize" as const,
    };
    reportCommitted(
      deps,
      "s1" as SessionId,
      "t1",
      {
        outcome: { kind: "finished", reason: "assistant_message", text: "ok" },
        usage: ZERO_USAGE,
        messages: [{ role: "user", content: [{ type: "text", text: "q" }] }, compaction],
      },
      3,
      1,
    );
    const text = await metrics.registry.metrics();
    expect(text).toContain('tether_compactions_total{mode="summarize"} 1');
  });
});
