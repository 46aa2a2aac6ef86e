// A turn's token cap is maxTurnTokens inside and `tokenBudget` wherever settings are stored
// (ADR 0036): a pending input or a parked turn written before the rename, or by a client through
// QueueService, keeps its cap, and what this version writes an older one still reads.
import { describe, expect, test } from "vitest";
import { settingsFromStored, settingsToStored } from "../../../../src/domain/turn-settings.js";
import { ZERO_USAGE } from "../../../../src/domain/usage.js";
import {
  decodeInputPayload,
  encodeInputPayload,
} from "../../../../src/runtime/turn/input-payload.js";
import { decodeProgress, encodeProgress } from "../../../../src/runtime/turn/turn-parking.js";

describe("stored turn settings", () => {
  test("the cap is stored under tokenBudget and read back as maxTurnTokens", () => {
    expect(settingsToStored({ model: "m1", maxTurnTokens: 70 })).toEqual({
      model: "m1",
      tokenBudget: 70,
    });
    expect(settingsFromStored({ model: "m1", tokenBudget: 70 })).toEqual({
      model: "m1",
      maxTurnTokens: 70,
    });
    expect(settingsToStored({ model: "m1" })).toEqual({ model: "m1" });
    expect(settingsFromStored(undefined)).toEqual({});
  });

  test("a pending input's payload keeps the stored key both ways", () => {
    const written = encodeInputPayload({
      items: [{ type: "text", text: "hi" }],
      clientTools: [],
      settings: { maxTurnTokens: 70 },
    });
    expect(JSON.parse(written)).toEqual({
      items: [{ type: "text", text: "hi" }],
      clientTools: [],
      settings: { tokenBudget: 70 },
    });
    const earlier = '{"items":[{"type":"text","text":"hi"}],"settings":{"tokenBudget":40}}';
    expect(decodeInputPayload(earlier).settings).toEqual({ maxTurnTokens: 40 });
  });

  test("a parked turn's progress keeps the stored key both ways", () => {
    const engine = {
      messages: [],
      toolCalls: [],
      usage: ZERO_USAGE,
      iterations: 1,
      assistantText: "",
      batch: [],
    };
    const written = encodeProgress({
      v: 1,
      engine,
      settled: {},
      shown: [],
      settings: { maxTurnTokens: 90 },
      clientTools: [],
    });
    expect((JSON.parse(written) as { settings: unknown }).settings).toEqual({ tokenBudget: 90 });
    const earlier = JSON.stringify({ v: 1, engine, settings: { tokenBudget: 25 } });
    expect(decodeProgress(earlier).settings).toEqual({ maxTurnTokens: 25 });
  });
});
