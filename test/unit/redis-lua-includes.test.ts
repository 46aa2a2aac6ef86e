// The include directive of the Redis store's Lua (ADR 0035): the resolver inlines each helper file
// once, after what it includes, and refuses what it cannot assemble; and every script as the
// loader sends it defines each helper before it first uses it.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { includesOf, resolveIncludes } from "../../src/store/redis/lua-includes.js";
import { scriptSources } from "../../src/store/redis/scripts.js";

describe("resolveIncludes", () => {
  const helpers: Record<string, string> = {
    num: "local function num(x) return x end",
    lease: '--- @include "num"\nlocal function live(k) return num(k) end',
    clock: '--- @include "num"\nlocal function now() return num(1) end',
  };
  const read = (name: string) => helpers[name];

  it("inlines each file once, after the files it includes, then the script unchanged", () => {
    const script =
      '-- put\n--- @include "lease"\n--- @include "clock"\n--- @include "num"\nreturn 1';
    expect(resolveIncludes("put-1.lua", script, read)).toBe(
      [helpers.num, helpers.lease, helpers.clock, script].join("\n"),
    );
  });

  it("fails, naming the file, on an unknown name, a cycle or a malformed directive", () => {
    expect(() => resolveIncludes("put-1.lua", '--- @include "nope"', read)).toThrow(
      'put-1.lua: includes "nope", but there is no _nope.lua',
    );
    expect(() =>
      resolveIncludes(
        "put-1.lua",
        '--- @include "lease"',
        (n) => ({ ...helpers, num: '--- @include "lease"' })[n],
      ),
    ).toThrow("put-1.lua: include cycle lease -> num -> lease");
    expect(() => resolveIncludes("put-1.lua", "--- @include num", read)).toThrow(
      "put-1.lua: malformed include line: --- @include num",
    );
    expect(includesOf("put-1.lua", '-- text that says @include "x" is prose\nreturn 1')).toEqual(
      [],
    );
  });
});

describe("the scripts as sent to Redis", () => {
  const dir = fileURLToPath(new URL("../../src/store/redis/lua/", import.meta.url));
  const helperNames = readdirSync(dir)
    .filter((f) => f.startsWith("_"))
    .flatMap((f) => [...readFileSync(dir + f, "utf8").matchAll(/^local (?:function )?(\w+)/gm)])
    .map((m) => m[1] as string);
  const code = (lua: string) => lua.replace(/--.*$/gm, "");

  it("knows the helpers (the check below is not vacuous)", () => {
    expect(helperNames).toEqual(expect.arrayContaining(["now_ms", "live_lease", "submit_input"]));
  });

  for (const [name, lua] of scriptSources()) {
    it(`${name}: defines every helper it uses before the first use, and no helper twice`, () => {
      const text = code(lua);
      for (const helper of helperNames) {
        const definitions = [
          ...text.matchAll(new RegExp(`^local (?:function )?${helper}\\b`, "gm")),
        ];
        const uses = [...text.matchAll(new RegExp(`\\b${helper}\\b`, "g"))].filter(
          (m) => !definitions.some((d) => m.index >= d.index && m.index < d.index + d[0].length),
        );
        expect(definitions.length, `${helper} defined once at most`).toBeLessThanOrEqual(1);
        if (uses.length > 0) {
          expect(definitions.length, `${helper} is used, so it is defined`).toBe(1);
          expect(
            (definitions[0]?.index ?? 0) < (uses[0]?.index ?? 0),
            `${helper} defined first`,
          ).toBe(true);
        }
      }
    });
  }
});
