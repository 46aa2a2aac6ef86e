// The one configuration schema (ADR 0033): every environment variable Tether reads is a
// ConfigVariable (name, default, parser, one line of doc) in its area's table, and every value is
// read through the reader made here over the environment loadConfig is given. A bad value stops
// the start with a ConfigError naming the variable, never a surprise at the first request.

import { readFileSync } from "node:fs";

export type Env = Readonly<Record<string, string | undefined>>;

/** The one refusal of configuration: the variable and what is wrong with it. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = "ConfigError";
  }
}

/**
 * Reads a set value (trimmed, never empty). It throws an Error saying what is wrong with the
 * value, and the reader names the variable; a ConfigError it throws (a problem that belongs to
 * another variable) passes unchanged.
 */
export type Parser<T> = (raw: string) => T;

export interface ConfigVariable<T, D extends string | undefined = string | undefined> {
  readonly name: string;
  /**
   * The value as it would be written in the environment, used when the variable is unset;
   * undefined: unset means off, none, or a value computed at start (the doc says which).
   */
  readonly default: D;
  readonly parse: Parser<T>;
  /** One line, for the README's configuration table. */
  readonly doc: string;
}

/** What a table entry reads as: its parser's type, and undefined only when it has no default. */
export type ValueOf<V> =
  V extends ConfigVariable<infer T, infer D> ? (D extends string ? T : T | undefined) : never;

export function variable<T, D extends string | undefined>(
  name: string,
  fallback: D,
  parse: Parser<T>,
  doc: string,
): ConfigVariable<T, D> {
  return { name, default: fallback, parse, doc };
}

export interface ConfigReader {
  /** The variable's value: parsed from the environment, else from its default. */
  get<V extends ConfigVariable<unknown>>(v: V): ValueOf<V>;
  /** Whether the environment sets it (blank counts as unset). */
  isSet(v: ConfigVariable<unknown>): boolean;
  /**
   * A variable whose name another value gives (a secret an endpoint or MCP entry points at), as
   * written: such names are the operator's, so no table can list them.
   */
  named(name: string): string | undefined;
  /** Runs a check of the content of `name`; an Error it throws becomes a ConfigError naming it. */
  check<T>(name: string, parse: () => T): T;
}

function setText(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** Runs `parse`; an Error it throws (other than a ConfigError) becomes a ConfigError naming `name`. */
function checkUnder<T>(name: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError || !(error instanceof Error)) throw error;
    throw new ConfigError(name, error.message);
  }
}

/** The reader over `env`; values are parsed when asked for, so an unused one is never checked. */
export function createConfigReader(env: Env): ConfigReader {
  return {
    get<V extends ConfigVariable<unknown>>(v: V): ValueOf<V> {
      const raw = setText(env, v.name) ?? v.default;
      if (raw === undefined) return undefined as ValueOf<V>;
      return checkUnder(v.name, () => v.parse(raw)) as ValueOf<V>;
    },
    isSet: (v) => setText(env, v.name) !== undefined,
    named: (name) => env[name],
    check: checkUnder,
  };
}

// The parsers every area shares. Messages say what is wrong and, where the value is no secret,
// what was given.

export const text: Parser<string> = (raw) => raw;

/**
 * A whole number from `min` to `max` (no max: any safe integer of at least `min`, the OTel
 * specification's form). Digits only, unless `form` is "number": then whatever `Number()` reads
 * as an integer ("1e3"), as the webhook settings have always accepted.
 */
export function integer(min: number, max?: number, form: "digits" | "number" = "digits") {
  return (raw: string): number => {
    const value = form === "number" || /^\d+$/u.test(raw) ? Number(raw) : Number.NaN;
    if (max === undefined) {
      if (Number.isSafeInteger(value) && value >= min) return value;
      throw new Error(`must be a whole number of at least ${min}, got "${raw}"`);
    }
    if (Number.isInteger(value) && value >= min && value <= max) return value;
    throw new Error(`must be an integer between ${min} and ${max}, got "${raw}"`);
  };
}

export function oneOf<T extends string>(allowed: readonly T[]): Parser<T> {
  return (raw) => {
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    throw new Error(`must be one of ${allowed.join(", ")}, got "${raw}"`);
  };
}

/** true or false in any case; with `digits`, also 1 or 0 (the webhook switches' form). */
export function flag(digits = false): Parser<boolean> {
  return (raw) => {
    const value = raw.toLowerCase();
    if (value === "true" || (digits && value === "1")) return true;
    if (value === "false" || (digits && value === "0")) return false;
    throw new Error(`must be true or false, got "${value}"`);
  };
}

/** "a,b": the non-empty items, each read by `item` (which throws naming the item). */
export function list<T>(item: (value: string) => T): Parser<T[]> {
  return (raw) =>
    raw
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "")
      .map(item);
}

/** "a,b" of names, each checked by `check` (which throws a message naming the name); no repeats. */
export function names(check: (value: string) => unknown): Parser<string[]> {
  return (raw) => [
    ...new Set(
      list((name) => {
        check(name);
        return name;
      })(raw),
    ),
  ];
}

/** "host:port,…" (Redis Cluster seeds, Sentinels). */
export const hostPorts: Parser<{ host: string; port: number }[]> = list((node) => {
  const match = /^(.+):(\d{1,5})$/u.exec(node);
  const port = Number(match?.[2]);
  if (!match?.[1] || port < 1 || port > 65535) throw new Error(`"${node}" is not host:port`);
  return { host: match[1], port };
});

/**
 * A document given inline or in a file named by a second variable (quotas, MCP servers): its text
 * and the variable it came from, or undefined when neither is set. Both set is refused.
 */
export function inlineOrFile(
  read: ConfigReader,
  inline: ConfigVariable<string, undefined>,
  file: ConfigVariable<string, undefined>,
): { name: string; text: string } | undefined {
  const value = read.get(inline);
  const path = read.get(file);
  if (value !== undefined && path !== undefined) {
    throw new ConfigError(inline.name, `set it or ${file.name}, not both`);
  }
  if (path === undefined)
    return value === undefined ? undefined : { name: inline.name, text: value };
  try {
    return { name: file.name, text: readFileSync(path, "utf8") };
  } catch (error) {
    throw new ConfigError(file.name, `cannot read ${path}: ${(error as Error).message}`);
  }
}
