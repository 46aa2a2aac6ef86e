// The event constructors the providers, the engine and the runtime share, and the rule that keeps
// them the only place a text delta is written out.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { reasoningDelta, textDelta } from "../../../src/domain/turn-events.js";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "gen" ? [] : sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

describe("turn event constructors", () => {
  test("textDelta and reasoningDelta build the plain events", () => {
    expect(textDelta("hi")).toEqual({ type: "text_delta", text: "hi" });
    expect(textDelta("")).toEqual({ type: "text_delta", text: "" });
    expect(reasoningDelta("step")).toEqual({ type: "reasoning_delta", text: "step" });
  });

  test("a text or reasoning delta is written out only by its constructor in src", () => {
    const literal = /type: "(?:text|reasoning)_delta",/u;
    const offenders = sourceFiles("src").filter(
      (path) =>
        !path.endsWith(join("domain", "turn-events.ts")) &&
        literal.test(readFileSync(path, "utf8")),
    );
    expect(offenders).toEqual([]);
  });
});
