// The README's configuration tables are the schema's documentation (ADR 0033): every variable of
// CONFIG_VARIABLES has one row with its default, and no row names a variable the schema lacks.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { CONFIG_VARIABLES } from "../../../src/server/config.js";

interface Row {
  name: string;
  defaultCell: string;
  meaning: string;
}

const HEADER = "| variable | default | meaning |";

/**
 * The rows of every `| variable | default | meaning |` table in README.md's Configuration section
 * (up to the next `## ` heading), whose first cell is one variable in backticks; a row for a
 * variable the operator names (a webhook endpoint's secret) is written in italics and skipped.
 */
function readmeRows(): Row[] {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
  const start = readme.indexOf("\n## Configuration\n");
  const end = readme.indexOf("\n## ", start + 1);
  const lines = readme.slice(start, end).split("\n");
  const rows: Row[] = [];
  let inTable = false;
  for (const line of lines) {
    if (line === HEADER) {
      inTable = true;
      continue;
    }
    if (!line.startsWith("|")) inTable = false;
    if (!inTable || line.startsWith("| ---") || line.startsWith("| *")) continue;
    // Split on cell borders, not on an escaped pipe inside a cell.
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/u)
      .map((c) => c.trim());
    const name = /^`([A-Z][A-Z0-9_]*)`$/u.exec(cells[0] ?? "")?.[1];
    if (name === undefined) throw new Error(`not one variable in backticks: ${line}`);
    rows.push({ name, defaultCell: cells[1] ?? "", meaning: cells[2] ?? "" });
  }
  return rows;
}

describe("README configuration tables", () => {
  const rows = readmeRows();

  test("list exactly the schema's variables, each once", () => {
    expect(rows.length).toBeGreaterThan(60);
    const listed = rows.map((r) => r.name);
    expect(listed.filter((name, i) => listed.indexOf(name) !== i)).toEqual([]);
    expect([...listed].sort()).toEqual(CONFIG_VARIABLES.map((v) => v.name).sort());
  });

  test("show each variable's default: its value in backticks, or words when it has none", () => {
    const byName = new Map(rows.map((r) => [r.name, r]));
    const wrong = CONFIG_VARIABLES.flatMap((v) => {
      const cell = byName.get(v.name)?.defaultCell ?? "";
      // A default is shown first, in backticks (a note may follow: "`4194304` (4 MiB)"); no
      // default is said in words (none, off, hostname), never as a value.
      const shown = /^`([^`]*)`/u.exec(cell)?.[1];
      const ok = v.default === undefined ? cell !== "" && !cell.includes("`") : shown === v.default;
      return ok ? [] : [`${v.name}: README "${cell}", schema ${v.default ?? "(none)"}`];
    });
    expect(wrong).toEqual([]);
  });

  test("give every variable one line of doc, in the README and in the schema", () => {
    expect(rows.filter((r) => r.meaning === "").map((r) => r.name)).toEqual([]);
    const badDocs = CONFIG_VARIABLES.filter((v) => v.doc.trim() === "" || v.doc.includes("\n"));
    expect(badDocs.map((v) => v.name)).toEqual([]);
  });
});
