// The event constructors the providers, the engine and the runtime share, and the rule that keeps
// them the only place a text delta is written out.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, expectTypeOf, test } from "vitest";
import type { SessionEvent } from "../../../src/domain/session-events.js";
import { reasoningDelta, textDelta, type TurnEvent } from "../../../src/domain/turn-events.js";

/** Kinds both unions name, and those whose shapes differ between them (checked by tsc). */
type SharedKind = TurnEvent["type"] & SessionEvent["type"];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Mismatched = {
  [K in SharedKind]: Same<
    Extract<TurnEvent, { type: K }>,
    Extract<SessionEvent, { type: K }>
  > extends true
    ? never
    : K;
}[SharedKind];

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

  test("a kind both the turn and the session unions name has one shape in both", () => {
    expectTypeOf<SharedKind>().toEqualTypeOf<
      | "text_delta"
      | "reasoning_delta"
      | "output_truncated"
      | "provider_retry"
      | "budget_reached"
      | "context_compacted"
    >();
    expectTypeOf<Mismatched>().toBeNever();
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
