// The compaction policy: validation at the edge, the turn over the agent field by field, defaults.
import { describe, expect, it } from "vitest";
import {
  overlayContextManagement,
  resolveContextPolicy,
  validateContextManagement,
} from "../../../src/domain/compaction.js";

describe("context management policy", () => {
  it("refuses a trigger under 1000 tokens, naming the field", () => {
    expect(validateContextManagement({ triggerTokens: 999 }, "options.context_management")).toEqual(
      [
        {
          field: "options.context_management.trigger_tokens",
          description: "must be at least 1000 (or 0 for off)",
        },
      ],
    );
    expect(validateContextManagement({ triggerTokens: 1000 }, "p")).toEqual([]);
    expect(validateContextManagement({ triggerTokens: 0 }, "p")).toEqual([]);
  });

  it("refuses a kept tail as large as the trigger", () => {
    expect(validateContextManagement({ triggerTokens: 2000, keepRecentTokens: 2000 }, "p")).toEqual(
      [{ field: "p.keep_recent_tokens", description: "must be less than trigger_tokens" }],
    );
  });

  it("overlays the turn's fields on the agent's one by one", () => {
    expect(
      overlayContextManagement(
        { triggerTokens: 50_000, keepRecentTokens: 8000, instructions: "agent's" },
        { keepRecentTokens: 4000, mode: "native" },
      ),
    ).toEqual({
      triggerTokens: 50_000,
      keepRecentTokens: 4000,
      instructions: "agent's",
      mode: "native",
    });
    // A turn's 0 switches the agent's compaction off.
    expect(
      resolveContextPolicy(
        overlayContextManagement({ triggerTokens: 50_000 }, { triggerTokens: 0 }),
      ),
    ).toBe(undefined);
  });

  it("is off without a trigger and fills in defaults with one", () => {
    expect(resolveContextPolicy(undefined)).toBe(undefined);
    expect(resolveContextPolicy({ keepRecentTokens: 10 })).toBe(undefined);
    const policy = resolveContextPolicy({ triggerTokens: 40_000 });
    expect(policy?.keepRecentTokens).toBe(10_000);
    expect(policy?.mode).toBe("summarize");
    expect(policy?.instructions.startsWith("Summarize the conversation above")).toBe(true);
  });
});
