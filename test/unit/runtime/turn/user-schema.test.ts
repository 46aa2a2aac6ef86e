// User-supplied schemas (issue 40): a pattern runs in linear time, one schema's `$id` is seen by
// no other, compiled schemas are kept in a bounded cache, and a schema past the size, depth or
// member bounds is refused naming its field, never overflowing the stack.
import { describe, expect, test } from "vitest";
import { isTetherError, type TetherError } from "../../../../src/domain/errors.js";
import {
  checkResponseFormat,
  responseMismatch,
} from "../../../../src/runtime/turn/response-format.js";
import {
  compileUserSchema,
  parseUserSchema,
  userSchemaCacheSize,
} from "../../../../src/runtime/turn/user-schema.js";

type Schema = Parameters<typeof compileUserSchema>[0];

function refusal(run: () => unknown, field: string): TetherError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(isTetherError(caught, "invalid_argument"), String(caught)).toBe(true);
  const error = caught as TetherError;
  expect(error.violations[0]?.field).toBe(field);
  return error;
}

/** `{"a": {"a": … 1 …}}`, `levels` objects deep, built without recursion. */
function nested(levels: number): Schema {
  let value: Schema = { type: "string" };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe("patterns", () => {
  test("a catastrophic pattern checks a 41-character answer and refuses it", () => {
    // A backtracking engine takes hours on this (2^40 ways to split the a's); RE2 is linear.
    const format = { name: "r", schema: { type: "string", pattern: "^(a+)+$" } };
    expect(responseMismatch(format, JSON.stringify(`${"a".repeat(40)}!`))).toBe(
      'the answer does not match response format r: the answer must match pattern "^(a+)+$"',
    );
    expect(responseMismatch(format, JSON.stringify("a".repeat(40)))).toBeUndefined();
  });

  test("patternProperties run by the same engine", () => {
    const check = compileUserSchema(
      { type: "object", patternProperties: { "^(x+)+$": { type: "integer" } } },
      "f",
    );
    expect(check({ xxx: 1 })).toBeUndefined();
    expect(check({ [`${"x".repeat(40)}`]: "s" })).toMatchObject({ message: "must be integer" });
  });

  test("two patterns of one schema stay two", () => {
    const check = compileUserSchema(
      {
        type: "object",
        properties: { a: { type: "string", pattern: "^a" }, b: { type: "string", pattern: "^b" } },
      },
      "f",
    );
    expect(check({ a: "a1", b: "b1" })).toBeUndefined();
    expect(check({ a: "a1", b: "a1" })).toEqual({ path: "/b", message: 'must match pattern "^b"' });
  });

  test("a JavaScript \\u escape and a case-insensitive class read as in JavaScript", () => {
    const check = compileUserSchema({ type: "string", pattern: "^\\u00e9\\d+$" }, "f");
    expect(check("é12")).toBeUndefined();
    expect(check("e12")).toBeDefined();
  });

  test.each([
    ["a backreference", "^(a)\\1$"],
    ["a lookahead", "^(?=a)a$"],
    ["a lookbehind", "(?<=a)b"],
  ])("%s is refused at submission naming the field", (_, pattern) => {
    const error = refusal(
      () => checkResponseFormat({ type: "string", pattern }, "options.response_format.json_schema"),
      "options.response_format.json_schema",
    );
    expect(error.violations[0]?.description).toMatch(/pattern .* is not supported/u);
  });
});

describe("uniqueItems", () => {
  test("objects equal up to key order are duplicates; distinct ones pass", () => {
    const check = compileUserSchema({ type: "array", uniqueItems: true }, "f");
    expect(check([{ a: 1, b: [2] }, "x", { b: [2], a: 1 }])).toEqual({
      path: "",
      message: "must NOT have duplicate items (items ## 2 and 0 are identical)",
    });
    expect(check([1, "1", [1], { a: 1 }, null, true])).toBeUndefined();
  });

  test("30,000 distinct objects are checked, not compared pairwise", () => {
    // Ajv's own uniqueItems compares every pair: about a minute for these on the event loop.
    const check = compileUserSchema(
      { type: "object", properties: { list: { type: "array", uniqueItems: true } } },
      "f",
    );
    const list = Array.from({ length: 30_000 }, (_, i) => ({ id: i }));
    expect(check({ list })).toBeUndefined();
    expect(check({ list: [...list, { id: 7 }] })).toMatchObject({ path: "/list" });
  });
});

describe("isolation", () => {
  const aSchema: Schema = {
    $id: "http://a.example/s",
    type: "object",
    properties: { secret_field_of_a: { type: "string" } },
    required: ["secret_field_of_a"],
  };

  test("tenant B cannot $ref tenant A's $id: the unknown reference is refused", () => {
    checkResponseFormat(aSchema, "a");
    const error = refusal(() => checkResponseFormat({ $ref: "http://a.example/s" }, "b"), "b");
    expect(error.message).toMatch(/can't resolve reference http:\/\/a\.example\/s/u);
    expect(error.message).not.toMatch(/secret_field_of_a/u);
  });

  test("tenant B cannot squat tenant A's $id", () => {
    checkResponseFormat({ $id: "http://a.example/squat", type: "string" }, "b");
    expect(() =>
      checkResponseFormat({ $id: "http://a.example/squat", type: "object" }, "a"),
    ).not.toThrow();
    const check = compileUserSchema({ $id: "http://a.example/squat", type: "object" }, "a");
    expect(check({})).toBeUndefined();
  });

  test("a schema with an $id is checked at submission and again in the turn, as another copy", () => {
    checkResponseFormat(aSchema, "options.response_format.json_schema");
    // The turn reads the schema back from the store: equal content, another object.
    const format = { name: "r", schema: structuredClone(aSchema) };
    expect(responseMismatch(format, '{"secret_field_of_a":"x"}')).toBeUndefined();
    expect(responseMismatch(format, "{}")).toMatch(/must have required property/u);
    // And a second, distinct schema with the same $id is no conflict either.
    const other = { ...structuredClone(aSchema), title: "second" };
    expect(responseMismatch({ name: "r", schema: other }, "{}")).toMatch(/required property/u);
  });

  test("a remote $ref is never fetched: it is an unknown reference", () => {
    refusal(() => compileUserSchema({ $ref: "https://example.com/schema.json" }, "f"), "f");
  });
});

describe("the cache", () => {
  test("equal content compiles once; distinct schemas past the bound evict the oldest", () => {
    const first = compileUserSchema({ type: "integer", title: "cache-0" }, "f");
    expect(compileUserSchema({ type: "integer", title: "cache-0" }, "f")).toBe(first);
    for (let i = 1; i <= 300; i++) compileUserSchema({ type: "integer", title: `cache-${i}` }, "f");
    const { entries, bytes } = userSchemaCacheSize();
    expect(entries).toBeLessThanOrEqual(256);
    expect(entries).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(8 * 1024 * 1024);
    // The first was evicted: compiled again, a new checker that behaves the same.
    const again = compileUserSchema({ type: "integer", title: "cache-0" }, "f");
    expect(again).not.toBe(first);
    expect(again("x")).toEqual({ path: "", message: "must be integer" });
  });
});

describe("bounds", () => {
  const field = "client_tools[0].parameters_json_schema";

  test("a schema text over 64 KiB is refused naming the field", () => {
    const big = JSON.stringify({ description: "x".repeat(64 * 1024) });
    const error = refusal(() => parseUserSchema(big, field), field);
    expect(error.violations[0]?.description).toBe("must be at most 65536 bytes");
  });

  test("a 100,000-level nested schema is refused, not a stack overflow", () => {
    const text = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
    refusal(() => parseUserSchema(text, field), field);
    // Within the byte bound too: 10,000 levels.
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    const error = refusal(() => parseUserSchema(deep, field), field);
    expect(error.violations[0]?.description).toBe("must nest objects and arrays at most 64 deep");
    // And as an object already in memory (a stored definition).
    refusal(
      () => compileUserSchema(nested(100_000), "response_format.schema"),
      "response_format.schema",
    );
  });

  test("64 levels are accepted, 65 refused", () => {
    expect(() => compileUserSchema(nested(64), "f")).not.toThrow();
    refusal(() => compileUserSchema(nested(65), "f"), "f");
  });

  const withProperties = (n: number): Schema => {
    const properties: Schema = {};
    for (let i = 0; i < n; i++) properties[`p${i}`] = {};
    return { type: "object", properties };
  };

  test("a compiled schema of more than 500 members is refused, 500 accepted", () => {
    // `type` and `properties`, then n properties.
    expect(() => compileUserSchema(withProperties(498), "f")).not.toThrow();
    const error = refusal(() => compileUserSchema(withProperties(499), "f"), "f");
    expect(error.violations[0]?.description).toBe(
      "must hold at most 500 object members and array elements",
    );
  });

  test("a client tool's schema, never compiled, is held to size and depth only", () => {
    const text = JSON.stringify(withProperties(2_000));
    expect(Object.keys(parseUserSchema(text, field).properties as object)).toHaveLength(2_000);
  });

  test("patterns get 2,000 RE2 instructions together", () => {
    // `.{1000}` is about 1,000 instructions: two fit, three do not.
    const two = { anyOf: [{ pattern: ".{1000}" }, { pattern: "x.{990}" }] };
    expect(() => compileUserSchema(two, "f")).not.toThrow();
    const three = { anyOf: [...two.anyOf, { pattern: "y.{100}" }] };
    const error = refusal(() => compileUserSchema(three, "f"), "f");
    expect(error.violations[0]?.description).toMatch(/patterns are too large together/u);
  });

  test("a recursive schema against a deeply nested answer is a mismatch, not a crash", () => {
    const format = { name: "r", schema: { type: "array", items: { $ref: "#" } } };
    const answer = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    expect(responseMismatch(format, answer)).toMatch(/nested too deeply/u);
  });
});
