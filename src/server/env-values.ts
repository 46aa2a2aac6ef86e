// Reading one environment variable: trimmed text, a bounded integer, one of a set. Each refusal
// is a ConfigError naming the variable, so a bad value stops the start with the name in it.
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = "ConfigError";
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

export function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

export function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/u.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return Number(raw);
}

export function oneOf<T extends string>(
  env: Env,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}
