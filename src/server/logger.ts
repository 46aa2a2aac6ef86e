// The structured logger: pino, with every place a secret can hide redacted (authorization
// headers, API keys, Redis passwords, provider keys), so a debug dump never leaks credentials.
import { pino, stdSerializers, type Logger } from "pino";
import type { LogLevel } from "./config.js";

export type { Logger };

export const REDACTED_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  'headers["x-api-key"]',
  "apiKey",
  "*.apiKey",
  "apiKeys",
  "*.apiKeys",
  "password",
  "*.password",
  "*.*.password",
  "redisUrl",
  "*.redisUrl",
  // ioredis errors carry the failed command with its arguments: AUTH/HELLO hold the password,
  // scripts hold user content.
  "*.command.args",
  "*.cause.command.args",
  "*.previousErrors[*].command.args",
];

export interface LoggerOptions {
  level: LogLevel;
  /** Where records go; stdout when unset (tests pass a stream to read them back). */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: "tether" },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      // Errors are logged under `err` or `error`; both get pino's error serializer, or an Error
      // under `error` would print as {} (its message and stack are not enumerable).
      serializers: { err: stdSerializers.err, error: stdSerializers.err },
    },
    options.destination ?? process.stdout,
  );
}

/** A Redis URL with its password replaced, fit for a log line. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "redacted";
    return parsed.toString();
  } catch {
    return "[unparseable url]";
  }
}
