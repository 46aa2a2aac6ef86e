// docs/guarantees.md names the test that checks each guarantee. A file moved or renamed without
// the doc following leaves a guarantee pointing at nothing; this keeps every named path real.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "../..");

/** Backticked repository paths (`test/…`, `src/…`, `bench/…`, `scripts/…`), globs left out. */
function namedPaths(text: string): string[] {
  const paths = [...text.matchAll(/`((?:test|src|bench|scripts)\/[^`\s]+)`/gu)].map((m) =>
    m[1]!.replace(/:\d+$/u, ""),
  );
  return [...new Set(paths)].filter((p) => !/[*{}<>]/u.test(p));
}

describe("docs name real files", () => {
  test.each(["docs/guarantees.md", "README.md"])("every path %s names exists", (doc) => {
    const paths = namedPaths(readFileSync(join(ROOT, doc), "utf8"));
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});
