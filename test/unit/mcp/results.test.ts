// MCP results as the model reads them, and tool names as providers accept them.
import { describe, expect, test } from "vitest";
import { modelToolName } from "../../../src/mcp/connection.js";
import { resultFromMcp } from "../../../src/mcp/hub.js";

describe("MCP results for the model", () => {
  test("text blocks join; images and resources become references; isError is kept", () => {
    expect(
      resultFromMcp({
        content: [
          { type: "text", text: "first" },
          { type: "image", data: "AAAA", mimeType: "image/png" },
          { type: "resource_link", uri: "file:///a.txt", name: "a" },
          { type: "resource", resource: { uri: "mem://n", text: "inline note" } },
          { type: "resource", resource: { uri: "mem://b", blob: "AAAA" } },
        ],
        isError: true,
      }),
    ).toEqual({
      output:
        "first\n[image image/png, 3 bytes]\n[resource file:///a.txt (a)]\ninline note\n[resource mem://b]",
      isError: true,
    });
  });

  test("structured content alone is passed as it is", () => {
    expect(resultFromMcp({ content: [], structuredContent: { rows: 2 } })).toEqual({
      output: { rows: 2 },
      isError: false,
    });
  });

  test("tool names: <server>__<tool>, in the characters and length providers accept", () => {
    expect(modelToolName("files", "read-file")).toBe("files__read-file");
    expect(modelToolName("files", "read.file v2")).toBe("files__read_file_v2");
    expect(modelToolName("s", "x".repeat(100))).toHaveLength(64);
  });
});
