// The checkers behind scripts/check-source.ts, on small samples: each must accept a good one and
// name what is wrong with a bad one.
import { describe, expect, test } from "vitest";
import {
  findCycles,
  importGraph,
  lineCount,
  largeFunctions,
  longFunctions,
  luaHeaderProblems,
  luaIncludeProblems,
  oversizedFiles,
} from "../../../scripts/source-gates.js";

const tree = (files: Record<string, string>) => new Map(Object.entries(files));

describe("import graph and cycles", () => {
  test("resolves relative .js imports of every form to .ts modules, and drops packages", () => {
    const graph = importGraph(
      tree({
        "src/a/one.ts": [
          'import { x } from "./two.js";',
          'import type { Y } from "../b/three.js";',
          'export { z } from "../b/four.js";',
          'const lazy = () => import("./five.js");',
          'import { readFileSync } from "node:fs";',
          'import { missing } from "./not-in-the-tree.js";',
        ].join("\n"),
        "src/a/two.ts": "export const x = 1;",
        "src/a/five.ts": "export const v = 1;",
        "src/b/three.ts": "export type Y = 1;",
        "src/b/four.ts": "export const z = 1;",
      }),
    );
    expect(graph.get("src/a/one.ts")).toEqual([
      "src/a/five.ts",
      "src/a/two.ts",
      "src/b/four.ts",
      "src/b/three.ts",
    ]);
    expect(graph.get("src/a/two.ts")).toEqual([]);
  });

  test("an acyclic tree, diamonds included, has no cycles", () => {
    const graph = new Map([
      ["a", ["b", "c"]],
      ["b", ["d"]],
      ["c", ["d"]],
      ["d", []],
    ]);
    expect(findCycles(graph)).toEqual([]);
  });

  test("finds each cycle once, as a path from its first module back to it", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
      ["e", ["f"]],
      ["f", ["e"]],
      ["g", ["g"]],
    ]);
    expect(findCycles(graph)).toEqual([
      ["a", "b", "c", "a"],
      ["e", "f", "e"],
      ["g", "g"],
    ]);
  });

  test("a cycle through type-only imports counts", () => {
    const graph = importGraph(
      tree({
        "src/x.ts": 'import type { B } from "./y.js";\nexport type A = B;',
        "src/y.ts": 'import type { A } from "./x.js";\nexport type B = A;',
      }),
    );
    expect(findCycles(graph)).toEqual([["src/x.ts", "src/y.ts", "src/x.ts"]]);
  });
});

describe("file size", () => {
  test("counts lines as wc -l does, plus an unterminated last line", () => {
    expect(lineCount("")).toBe(0);
    expect(lineCount("a\nb\n")).toBe(2);
    expect(lineCount("a\nb")).toBe(2);
  });

  test("lists files over the limit, longest first, except those allowed", () => {
    const files = tree({
      "src/ok.ts": "x\n".repeat(400),
      "src/long.ts": "x\n".repeat(401),
      "src/longer.ts": "x\n".repeat(450),
      "src/allowed.ts": "x\n".repeat(900),
    });
    expect(oversizedFiles(files, 400, new Map([["src/allowed.ts", "reason"]]))).toEqual([
      { path: "src/longer.ts", lines: 450 },
      { path: "src/long.ts", lines: 401 },
    ]);
  });
});

describe("function size", () => {
  /** `n` statements, one a line. */
  const statements = (n: number) =>
    Array.from({ length: n }, (_, i) => `  total += ${i};`).join("\n");

  test("a function over the limit is named with its line and own lines; one at it passes", () => {
    const files = tree({
      "src/a.ts": [
        "export const ok = 1;",
        "export function long(): number {", // line 2
        "  let total = 0;",
        statements(5),
        "  return total;",
        "}",
        "function atLimit(): number {",
        "  let total = 0;",
        statements(4),
        "  return total;",
        "}",
      ].join("\n"),
    });
    // long: its opening line, the let, five statements, the return and the closing brace.
    expect(longFunctions(files, 8)).toEqual([
      { path: "src/a.ts", line: 2, name: "long", ownLines: 9 },
    ]);
  });

  test("a factory of small methods passes; a long method fails under its own name", () => {
    const method = (name: string, n: number) =>
      [
        `    ${name}(): number {`,
        "      let total = 0;",
        statements(n),
        "      return total;",
        "    },",
      ].join("\n");
    const files = tree({
      "src/factory.ts": [
        "export function createThing() {", // line 1
        "  return {",
        method("first", 3),
        method("second", 3),
        method("third", 3),
        "  };",
        "}",
      ].join("\n"),
      "src/bad.ts": [
        "export const createBad = () => ({",
        method("short", 1),
        method("tooLong", 12), // line 7
        "});",
      ].join("\n"),
    });
    // The factory spans 22 lines but owns 4 (its methods' lines are theirs); each method owns 7.
    expect(longFunctions(files, 10)).toEqual([
      { path: "src/bad.ts", line: 7, name: "tooLong", ownLines: 16 },
    ]);
    expect(longFunctions(files, 3).map((f) => `${f.name} ${f.ownLines}`)).toEqual([
      "tooLong 16",
      "first 7",
      "second 7",
      "third 7",
      "short 5",
      "createThing 4",
    ]);
  });

  test("the lines of a nested function are its own alone, even those it shares", () => {
    const files = tree({
      "src/d.ts": [
        "function outer(items: number[]): number[] {",
        "  const doubled = items.map((x) => {",
        "    return x * 2;",
        "  });",
        "  return doubled;",
        "}",
      ].join("\n"),
    });
    // outer: its first line, the return and its closing brace; the callback: lines 2 to 4.
    expect(longFunctions(files, 0)).toEqual([
      { path: "src/d.ts", line: 1, name: "outer", ownLines: 3 },
      { path: "src/d.ts", line: 2, name: "<anonymous>", ownLines: 3 },
    ]);
  });

  test("blank and comment-only lines do not count; a template literal's lines do", () => {
    const files = tree({
      "src/c.ts": [
        "/**",
        " * A long doc comment",
        " * over several lines.",
        " */",
        "const described = (): string => {", // line 5
        "  // a comment",
        "",
        "  /* a block",
        "     comment */",
        "",
        "  const text = `one",
        "two",
        "three`;",
        "  return text;",
        "};",
        "class Shape {",
        "  constructor(readonly side: number) {}",
        "  get area(): number {",
        "    return this.side * this.side;",
        "  }",
        "}",
      ].join("\n"),
    });
    // described: its first line, the three lines of the template, the return and the closing brace.
    expect(longFunctions(files, 5)).toEqual([
      { path: "src/c.ts", line: 5, name: "described", ownLines: 6 },
    ]);
    expect(longFunctions(files, 6)).toEqual([]);
    expect(longFunctions(files, 1).map((f) => `${f.name} ${f.ownLines}`)).toEqual([
      "described 6",
      "area 3",
    ]);
  });
});

describe("total function size", () => {
  /** A closure of `n` statements, bound to `name`. */
  const closure = (name: string, n: number) =>
    [
      `  const ${name} = (): number => {`,
      "    let total = 0;",
      ...Array.from({ length: n }, (_, i) => `    total += ${i};`),
      "    return total;",
      "  };",
    ].join("\n");

  test("a factory of small closures is measured with all it nests, under its own name", () => {
    const files = tree({
      "src/factory.ts": [
        "// a comment that does not count",
        "export function createThing() {", // line 2
        closure("first", 3),
        "",
        closure("second", 3),
        "  return { first, second };",
        "}",
        "export function small(): number {", // line 8
        "  return 1;",
        "}",
      ].join("\n"),
    });
    // createThing: its first line, two closures of 7 lines, the return and its closing brace.
    expect(largeFunctions(files, 17)).toEqual([]);
    expect(largeFunctions(files, 16)).toEqual([
      { path: "src/factory.ts", line: 2, name: "createThing", totalLines: 17 },
    ]);
    // The closures never count on their own, and every own size stays within a small limit.
    expect(largeFunctions(files, 2).map((f) => `${f.name} ${f.totalLines}`)).toEqual([
      "createThing 17",
      "small 3",
    ]);
    expect(longFunctions(files, 7)).toEqual([]);
  });

  test("a class's methods are each a top-level unit", () => {
    const files = tree({
      "src/shape.ts": [
        "export class Shape {",
        "  constructor(readonly side: number) {}",
        "  area(): number {", // line 3
        "    const square = () => this.side * this.side;",
        "    return square();",
        "  }",
        "}",
      ].join("\n"),
    });
    expect(largeFunctions(files, 0).map((f) => `${f.name} ${f.line} ${f.totalLines}`)).toEqual([
      "area 3 4",
      "constructor 2 1",
    ]);
  });
});

describe("Lua script headers", () => {
  const good = [
    "-- renew: extend the lease under the exact fence.",
    "-- KEYS[1] lease hash   KEYS[2] counter",
    "-- ARGV[1] lease token   ARGV[2] ttl in ms   ARGV[3..] ids",
    "-- Replies: {R.OK, exp}",
    "--          {R.LEASE_EXPIRED}",
    "local lease_key = KEYS[1]",
    "local counter_key = KEYS[2]",
    "local token = ARGV[1]",
    "local ttl = ARGV[2]",
    "",
    "local lease = redis.call('HGET', lease_key, token) -- KEYS[9] in a comment is no use",
    "redis.call('INCR', counter_key)",
    "for i = 3, #ARGV do redis.call('SADD', counter_key, ARGV[i]) end",
    "return { R.OK, ttl }",
  ].join("\n");

  test("a complete header passes", () => {
    expect(luaHeaderProblems("renew-2.lua", good)).toEqual([]);
  });

  test("a slot read but not named is reported", () => {
    const text = good.replace("   ARGV[2] ttl in ms", "");
    expect(luaHeaderProblems("renew-2.lua", text)).toEqual([
      "renew-2.lua: the script reads ARGV[2], which the header does not name",
    ]);
  });

  test("the key count in the name must match the keys the header names", () => {
    expect(luaHeaderProblems("renew-3.lua", good)).toEqual([
      "renew-3.lua: the header does not name KEYS[3]",
    ]);
    expect(luaHeaderProblems("renew-1.lua", good)).toEqual([
      "renew-1.lua: the header names KEYS[2] but the file name says 1 keys",
    ]);
    expect(luaHeaderProblems("renew.lua", good)).toEqual([
      "renew.lua: the name must be <operation>-<number of KEYS, or min-max, or n>.lua",
    ]);
    // `-<min>-<max>`: the last keys are optional, and the header names all max of them.
    expect(luaHeaderProblems("renew-1-2.lua", good)).toEqual([]);
    expect(luaHeaderProblems("renew-2-3.lua", good)).toEqual([
      "renew-2-3.lua: the header does not name KEYS[3]",
    ]);
  });

  test("a script whose calls give the key count names its keys as one range", () => {
    const text = [
      "-- touch: extend every key.",
      "-- KEYS[1..] lease hashes",
      "-- ARGV[1] ttl",
      "-- Replies: {R.OK}",
      "local ttl = ARGV[1]",
      "for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end",
      "return { R.OK }",
    ].join("\n");
    expect(luaHeaderProblems("touch-n.lua", text)).toEqual([]);
    expect(
      luaHeaderProblems("touch-n.lua", text.replace("KEYS[1..] lease hashes", "KEYS[1] a")),
    ).toEqual([
      "touch-n.lua: a script whose calls give the key count names its keys as one range, KEYS[1..]",
    ]);
    expect(luaHeaderProblems("touch-1.lua", text)).toEqual([
      "touch-1.lua: KEYS must be named one by one, not as a range",
      "touch-1.lua: the header does not name KEYS[1]",
    ]);
  });

  test("a named slot the script never reads is reported (a stale header)", () => {
    const text = good.replace("local ttl = ARGV[2]\n", "").replace("R.OK, ttl", "R.OK");
    expect(luaHeaderProblems("renew-2.lua", text)).toEqual([
      "renew-2.lua: the header names ARGV[2], which the script never reads",
    ]);
  });

  test("slots chosen at run time need a range in the header", () => {
    const text = good.replace("   ARGV[3..] ids", "");
    expect(luaHeaderProblems("renew-2.lua", text)).toEqual([
      "renew-2.lua: the script reads ARGV slots chosen at run time; the header must name them as a range (ARGV[k..])",
    ]);
  });

  test("unpack(KEYS) reads every key the header names", () => {
    const text = [
      "-- drop: delete everything.",
      "-- KEYS[1] a   KEYS[2] b",
      "-- Replies: {R.OK}",
      "redis.call('DEL', unpack(KEYS))",
      "return { R.OK }",
    ].join("\n");
    expect(luaHeaderProblems("drop-2.lua", text)).toEqual([]);
  });

  test("the replies must be named", () => {
    const text = good.replace("-- Replies: {R.OK, exp}\n--          {R.LEASE_EXPIRED}\n", "");
    expect(luaHeaderProblems("renew-2.lua", text)).toEqual([
      'renew-2.lua: the header does not name the replies ("-- Replies: ...")',
    ]);
  });

  test("a shared helper file reads no slots", () => {
    expect(luaHeaderProblems("_lease.lua", "-- helpers\nlocal function f(k) return k end")).toEqual(
      [],
    );
    expect(luaHeaderProblems("_lease.lua", "-- helpers\nlocal x = KEYS[1]")).toEqual([
      "_lease.lua: a shared helper file must not read KEYS or ARGV",
    ]);
  });
});

describe("Lua slots bound to named locals", () => {
  const script = (...body: string[]) =>
    ["-- put: store one value.", "-- KEYS[1] hash", "-- ARGV[1] value", "-- Replies: {R.OK}"]
      .concat(body)
      .join("\n");

  test("a numbered slot read in the body is reported: it is bound at the top", () => {
    const bound = script("local hash_key = KEYS[1]", "local value = ARGV[1]", "");
    expect(luaHeaderProblems("put-1.lua", `${bound}redis.call('SET', hash_key, value)`)).toEqual(
      [],
    );
    expect(
      luaHeaderProblems(
        "put-1.lua",
        script("local value = ARGV[1]", "redis.call('SET', KEYS[1], value)"),
      ),
    ).toEqual(["put-1.lua: reads KEYS[1] in its body; bind it at the top (local name = KEYS[1])"]);
  });

  test("a binding after the first statement, or a slot bound twice, is reported", () => {
    const late = script("local hash_key = KEYS[1]", "redis.call('PING')", "local value = ARGV[1]");
    expect(luaHeaderProblems("put-1.lua", `${late}\nredis.call('SET', hash_key, value)`)).toEqual([
      "put-1.lua: binds ARGV[1] after its first statement; bind slots at the top",
    ]);
    const twice = script(
      "local hash_key = KEYS[1]",
      "local again = KEYS[1]",
      "local value = ARGV[1]",
    );
    expect(luaHeaderProblems("put-1.lua", `${twice}\nredis.call('SET', again, value)`)).toEqual([
      "put-1.lua: binds KEYS[1] twice",
    ]);
  });
});

describe("Lua includes", () => {
  const header = "-- put: store.\n-- KEYS[1] hash\n-- Replies: {R.OK}";
  const helpers = {
    "_num.lua": "-- helpers\nlocal function num(x) return x end",
    "_lease.lua": '-- helpers\n--- @include "num"\nlocal function live(k) return num(k) end',
  };
  const tree = (script: string) =>
    new Map(Object.entries({ ...helpers, "put-1.lua": `${header}\n${script}` }));

  test("a script that includes every helper file it calls, and no other, passes", () => {
    const script = '--- @include "lease"\n--- @include "num"\nreturn { live(KEYS[1]), num(1) }';
    expect(luaIncludeProblems(tree(script))).toEqual([]);
  });

  test("a helper called without its include is reported, even when another include reaches it", () => {
    expect(luaIncludeProblems(tree("return { num(1) } -- num( in a comment is no call"))).toEqual([
      'put-1.lua: uses num without including "num"',
    ]);
    expect(luaIncludeProblems(tree('--- @include "lease"\nreturn { live(1), num(1) }'))).toEqual([
      'put-1.lua: uses num from "num" but does not include it itself',
    ]);
  });

  test("an include the file uses nothing of, an unknown name and a cycle are reported", () => {
    expect(luaIncludeProblems(tree('--- @include "num"\nreturn { R.OK }'))).toEqual([
      'put-1.lua: includes "num" but uses nothing it defines',
    ]);
    expect(luaIncludeProblems(tree('--- @include "clock"\nreturn { R.OK }'))).toEqual([
      'put-1.lua: includes "clock", but there is no _clock.lua',
    ]);
    const cyclic = tree('--- @include "lease"\nreturn { live(1) }');
    cyclic.set("_num.lua", '--- @include "lease"\nlocal function num(x) return live(x) end');
    expect(luaIncludeProblems(cyclic)).toContain("_num.lua: include cycle num -> lease -> num");
  });

  test("a helper defined in two files is reported", () => {
    const files = tree('--- @include "num"\nreturn { num(1) }');
    files.set("_clock.lua", "local function num(x) return x end");
    expect(luaIncludeProblems(files)).toContain("_clock.lua: num is also defined in _num.lua");
  });
});
