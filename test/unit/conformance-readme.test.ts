// The conformance README's coverage table is generated from the law files: it must match them,
// and every operation of the store port must be called by some law.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import {
  README,
  readmeWithCoverage,
  renderCoverage,
} from "../conformance/support/coverage-table.js";

describe("conformance coverage table", () => {
  test("test/conformance/README.md shows the table the law files give (regenerate with --write)", () => {
    const readme = readFileSync(README, "utf8");
    expect(readme).toBe(readmeWithCoverage(readme));
  });

  test("every operation of the store port is called by some law", () => {
    const port = readFileSync(new URL("../../src/ports/runtime-store.ts", import.meta.url), "utf8");
    const operations = [...port.matchAll(/^ {2}(\w+)\(/gmu)].map((m) => m[1] ?? "");
    expect(operations.length).toBeGreaterThan(20);
    const table = renderCoverage();
    const uncovered = operations.filter((op) => op !== "close" && !table.includes(`\`${op}\``));
    expect(uncovered).toEqual([]);
  });
});
