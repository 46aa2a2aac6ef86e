// Static checks of the Redis store's Lua scripts: the file name's key count matches the keys the
// script uses and its header, every header names its replies, and every reply code used is in
// the shared table.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { REPLY } from "../../src/store/redis/replies.js";
import { SCRIPT_NAMES } from "../../src/store/redis/scripts.js";

const dir = fileURLToPath(new URL("../../src/store/redis/lua/", import.meta.url));
// `<operation>-<key count>.lua`, `-<min>-<max>` when the last keys are optional, or `-n` when
// each call gives the key count.
const files = readdirSync(dir).filter((f) => /^[A-Za-z]+-(\d+(-\d+)?|n)\.lua$/.test(f));

function header(text: string): string {
  const lines = text.split("\n");
  const end = lines.findIndex((line) => !line.startsWith("--"));
  return lines.slice(0, end).join("\n");
}

describe("redis Lua scripts", () => {
  it("has exactly one file per script the store runs", () => {
    const names = files.map((f) => f.replace(/-(\d+(-\d+)?|n)\.lua$/, "")).sort();
    expect(names).toEqual([...SCRIPT_NAMES].sort());
  });

  for (const file of files.filter((f) => f.endsWith("-n.lua"))) {
    it(`${file}: its header names the keys as one range and the body reads no fixed key`, () => {
      const text = readFileSync(dir + file, "utf8");
      const head = header(text);
      expect(head).toMatch(/KEYS\[1\.\.\]/);
      expect([...text.matchAll(/KEYS\[(\d+)\]/g)]).toEqual([]);
      expect(head).toMatch(/Replies:/);
    });
  }

  for (const file of files.filter((f) => !f.endsWith("-n.lua"))) {
    it(`${file}: the key count in its name matches its header and body`, () => {
      // `<name>-<min>-<max>.lua`: keys past min are optional, and the header says when absent.
      const [, min, max] = /-(\d+)(?:-(\d+))?\.lua$/.exec(file) ?? [];
      const keys = Number(max ?? min);
      const text = readFileSync(dir + file, "utf8");
      const head = header(text);
      for (let optional = Number(min) + 1; optional <= keys; optional++) {
        expect(head).toMatch(new RegExp(`KEYS\\[${optional}\\][^]*absent`));
      }
      const named = [...head.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
      expect(Math.max(...named)).toBe(keys);
      expect(new Set(named).size).toBe(keys);
      const used = [...text.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
      expect(Math.max(...used)).toBeLessThanOrEqual(keys);
      expect(head).toMatch(/Replies:/);
      for (const [, code] of text.matchAll(/\bR\.([A-Z_]+)/g)) {
        expect(Object.keys(REPLY)).toContain(code);
      }
    });
  }
});
