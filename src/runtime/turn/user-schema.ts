// JSON schemas that tenants (response formats) or MCP servers (tool output schemas) hand us. One
// tenant's schema must not freeze, starve or read another's, so each schema is bounded before
// anything walks it recursively, compiled in an Ajv of its own (no shared `$id` registry, no
// remote `$ref`), with `pattern` and `patternProperties` run by RE2 in linear time, and the
// compiled validators are kept in a small LRU keyed by the schema's content hash (ADR 0027).
import { createHash } from "node:crypto";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { RE2JS } from "re2js";
import type { JsonValue } from "../../domain/conversation.js";
import { invalidArgument } from "../../domain/errors.js";

export type JsonSchemaObject = { [key: string]: JsonValue };

/**
 * Bounds every user schema meets at submission. A schema within them compiles in tens of
 * milliseconds and nothing that walks it (Ajv, JSON.stringify, the store) runs out of stack.
 */
export const USER_SCHEMA_LIMITS = {
  /** The schema's JSON text, in UTF-8 bytes. */
  maxBytes: 64 * 1024,
  /** Objects and arrays nested in one another, the schema itself being level 1. */
  maxDepth: 64,
  /**
   * Object members and array elements in a schema Tether compiles: Ajv's compile time grows
   * with them (a client tool's schema, never compiled here, is not held to this).
   */
  maxMembers: 500,
  /**
   * RE2 instructions of all the schema's patterns together: checking a string costs its length
   * times the instructions of the patterns it meets, so this bounds a check's time per byte.
   */
  maxPatternProgram: 2_000,
} as const;

/** Where a value breaks its schema first: a JSON pointer ("" for the value itself), and why. */
export interface SchemaMismatch {
  path: string;
  message: string;
}

/** Undefined when the value matches its schema. */
export type SchemaCheck = (value: unknown) => SchemaMismatch | undefined;

/** Compiled validators kept; a schema evicted is compiled again on its next use. */
export const USER_SCHEMA_CACHE_ENTRIES = 256;
/** The kept schemas' JSON text, in bytes (the compiled code grows with it). */
export const USER_SCHEMA_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * Parses a schema given as JSON text and checks its size and depth: the edge's one call for a
 * schema field. Throws invalid_argument naming `field`.
 */
export function parseUserSchema(text: string, field: string): JsonSchemaObject {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > USER_SCHEMA_LIMITS.maxBytes) {
    throw invalidArgument(field, `must be at most ${USER_SCHEMA_LIMITS.maxBytes} bytes`);
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    throw invalidArgument(field, "must be JSON");
  }
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw invalidArgument(field, "must be a JSON object");
  }
  checkShape(schema as JsonSchemaObject, field, Number.POSITIVE_INFINITY);
  return schema as JsonSchemaObject;
}

/**
 * Depth and member count, walked with an explicit stack: the schema may be nested far deeper
 * than the call stack allows (JSON.parse itself does not recurse).
 */
function checkShape(schema: JsonSchemaObject, field: string, maxMembers: number): void {
  const pending: { value: JsonValue; depth: number }[] = [{ value: schema, depth: 1 }];
  let members = 0;
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth } = next;
    if (value === null || typeof value !== "object") continue;
    if (depth > USER_SCHEMA_LIMITS.maxDepth) {
      throw invalidArgument(
        field,
        `must nest objects and arrays at most ${USER_SCHEMA_LIMITS.maxDepth} deep`,
      );
    }
    const children = Array.isArray(value) ? value : Object.values(value);
    members += children.length;
    if (members > maxMembers) {
      throw invalidArgument(
        field,
        `must hold at most ${maxMembers} object members and array elements`,
      );
    }
    for (const child of children) pending.push({ value: child, depth: depth + 1 });
  }
}

/**
 * A pattern in RE2 syntax: ECMAScript's `\uXXXX` becomes RE2's `\x{XXXX}`; everything else RE2
 * reads as JavaScript does or refuses (backreferences, lookaround).
 */
function re2Syntax(pattern: string): string {
  return pattern.replace(/(?<!\\)((?:\\\\)*)\\u([0-9A-Fa-f]{4})/gu, "$1\\x{$2}");
}

type RegExpEngine = ((pattern: string, flags: string) => RegExpLike) & { code: string };
interface RegExpLike {
  test(s: string): boolean;
  toString(): string;
}

/**
 * Ajv's `code.regExp` for one compile: RE2 matches in time linear in the input, whatever the
 * pattern, and the patterns together get `maxPatternProgram` instructions.
 */
function re2Engine(): RegExpEngine {
  let program = 0;
  const engine = (pattern: string, flags: string): RegExpLike => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(
        re2Syntax(pattern),
        flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0,
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`pattern ${JSON.stringify(pattern)} is not supported (${reason})`, {
        cause: error,
      });
    }
    program += compiled.programSize();
    if (program > USER_SCHEMA_LIMITS.maxPatternProgram) {
      throw new Error(
        `its patterns are too large together (at most ${USER_SCHEMA_LIMITS.maxPatternProgram} RE2 instructions; ${JSON.stringify(pattern)} reaches ${program})`,
      );
    }
    return {
      test: (s: string) => compiled.test(s),
      // Ajv keeps one regex per distinct key in a compiled schema: the key must tell them apart.
      toString: () => `/${pattern}/${flags}`,
    };
  };
  return Object.assign(engine, { code: "re2js" });
}

/** Checks schemas against the JSON Schema meta-schema; never compiles or registers one. */
const metaChecker = new Ajv({ strict: false, logger: false });

/** JSON text with object keys sorted: equal exactly for the values JSON Schema calls equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    const members = Object.keys(object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * `uniqueItems` in time linear in the array's size: Ajv's own compares every pair of object
 * items (10,000 items: seconds on the event loop).
 */
function checkUniqueItems(schema: boolean, data: unknown[]): boolean {
  checkUniqueItems.errors = undefined;
  if (!schema) return true;
  const seen = new Map<string, number>();
  for (const [j, item] of data.entries()) {
    const key = canonical(item);
    const i = seen.get(key);
    if (i !== undefined) {
      checkUniqueItems.errors = [
        {
          keyword: "uniqueItems",
          message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
          params: { i, j },
        },
      ];
      return false;
    }
    seen.set(key, j);
  }
  return true;
}
checkUniqueItems.errors = undefined as Partial<ErrorObject>[] | undefined;

function compile(schema: JsonSchemaObject): ValidateFunction {
  if (!metaChecker.validateSchema(schema)) {
    throw new Error(metaChecker.errorsText(metaChecker.errors));
  }
  // A fresh instance per schema: its `$id`s are seen by no other schema, and a `$ref` it
  // cannot resolve inside itself fails the compile (no loadSchema, so nothing is fetched).
  const ajv = new Ajv({
    strict: false,
    logger: false,
    // Flat generated code: with allErrors off Ajv nests one block per property, and a few
    // thousand properties overflow the parser's stack.
    allErrors: true,
    validateSchema: false,
    code: { regExp: re2Engine() },
  });
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({
    keyword: "uniqueItems",
    type: "array",
    schemaType: "boolean",
    errors: true,
    validate: checkUniqueItems,
  });
  return ajv.compile(schema);
}

interface CacheEntry {
  check: SchemaCheck;
  bytes: number;
}

/** Least recently used first: a Map iterates in insertion order, and a hit re-inserts. */
const cache = new Map<string, CacheEntry>();
let cachedBytes = 0;

function remember(key: string, entry: CacheEntry): void {
  cache.set(key, entry);
  cachedBytes += entry.bytes;
  for (const [oldest, old] of cache) {
    if (cache.size <= USER_SCHEMA_CACHE_ENTRIES && cachedBytes <= USER_SCHEMA_CACHE_BYTES) break;
    cache.delete(oldest);
    cachedBytes -= old.bytes;
  }
}

/** How many compiled schemas are kept, and their text's bytes (for tests and metrics). */
export function userSchemaCacheSize(): { entries: number; bytes: number } {
  return { entries: cache.size, bytes: cachedBytes };
}

/**
 * A checker for `schema`, compiled once per content. Throws invalid_argument naming `field` when
 * the schema breaks a bound or cannot be compiled (an unknown `$ref`, a pattern RE2 refuses, a
 * keyword with a value of the wrong type).
 */
export function compileUserSchema(schema: JsonSchemaObject, field: string): SchemaCheck {
  // Bounds first: JSON.stringify below recurses as deep as the schema nests.
  checkShape(schema, field, USER_SCHEMA_LIMITS.maxMembers);
  const text = JSON.stringify(schema);
  const key = createHash("sha256").update(text).digest("hex");
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.check;
  }
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > USER_SCHEMA_LIMITS.maxBytes) {
    throw invalidArgument(field, `must be at most ${USER_SCHEMA_LIMITS.maxBytes} bytes`);
  }
  let validate: ValidateFunction;
  try {
    validate = compile(schema);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalidArgument(field, `is not a usable JSON schema: ${reason}`);
  }
  const check: SchemaCheck = (value) => {
    try {
      if (validate(value)) return undefined;
    } catch (error) {
      // A recursive schema follows the value as deep as it nests.
      if (error instanceof RangeError)
        return { path: "", message: "is nested too deeply to check" };
      throw error;
    }
    const first = validate.errors?.[0];
    return { path: first?.instancePath ?? "", message: first?.message ?? "is invalid" };
  };
  remember(key, { check, bytes });
  return check;
}
