// The Agents API's input events in Tether's terms (src/agents-api/event-inputs.ts): the busy
// strategy header, a tool result's output and error, message content as input items.
import { describe, expect, it } from "vitest";
import { TetherError } from "../../../src/domain/errors.js";
import {
  busyStrategyOf,
  inputItemsOf,
  outputText,
  toolResultOf,
} from "../../../src/agents-api/event-inputs.js";

describe("the Agents API's input events in Tether's terms", () => {
  it("reads Tether-Busy-Strategy, steer when absent, a 400 naming the header otherwise", () => {
    expect(busyStrategyOf(undefined)).toBe("steer");
    expect(busyStrategyOf(" Enqueue ")).toBe("enqueue");
    expect(busyStrategyOf("reject")).toBe("reject");
    expect(busyStrategyOf("interrupt")).toBe("interrupt");
    expect(() => busyStrategyOf("soon")).toThrow(TetherError);
  });

  it("turns an output (string or content parts) into text; success: false is an error", () => {
    expect(outputText(null)).toBe("");
    expect(outputText("plain")).toBe("plain");
    expect(
      outputText([
        { type: "input_text", text: "a" },
        { type: "input_image", image_url: "https://x/y.png" },
      ]),
    ).toBe("a\nhttps://x/y.png");
    expect(toolResultOf({ call_id: "c", success: true, output: "ok" })).toEqual({
      callId: "c",
      output: "ok",
      isError: false,
    });
    expect(toolResultOf({ call_id: "c", success: false, error: "boom", output: "x" })).toEqual({
      callId: "c",
      output: "boom",
      isError: true,
    });
    expect(toolResultOf({ call_id: "c", success: false })).toMatchObject({ isError: true });
  });

  it("takes every message's content in order; a data URL is an inline image", () => {
    const items = inputItemsOf(
      [
        { content: [{ type: "input_text", text: "one" }] },
        {
          content: [
            { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" },
            { type: "input_image", image_url: "https://example.com/a.jpg" },
          ],
        },
      ],
      "events[0]",
    );
    expect(items.map((i) => (i.type === "text" ? i.text : i.image.kind))).toEqual([
      "one",
      "inline",
      "url",
    ]);
  });
});
