// The structured logger: pino, with every place a secret can hide redacted (authorization
// headers, API keys, Redis passwords, provider keys), so a debug dump never leaks credentials.
import { pino, type Logger } from "pino";
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
