// A turn's response format: the JSON schema its final answer must match. The schema is checked
// once, at the edge (checkResponseFormat), and goes to providers that shape output by it
// (ModelCallOptions.responseFormat); whatever the provider did, the final text is checked here
// before the turn finishes, and a mismatch ends the turn failed (response_format_mismatch).
// Compiling and the cache of compiled schemas are user-schema.ts's (ADR 0027).
import type { JsonValue } from "../../domain/conversation.js";
import { isTetherError } from "../../domain/errors.js";
import type { ResponseFormat } from "../../domain/turn-settings.js";
import { compileUserSchema, type SchemaCheck } from "./user-schema.js";

export type { ResponseFormat };

export const RESPONSE_FORMAT_NAME = /^[A-Za-z0-9_-]{1,64}$/u;

/** Throws invalid_argument naming `field` when the schema is not one the turn can check by. */
export function checkResponseFormat(schema: { [key: string]: JsonValue }, field: string): void {
  compileUserSchema(schema, field);
}

/** Undefined when `text` is JSON matching the format; else why it is not, for the client. */
export function responseMismatch(format: ResponseFormat, text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `the answer is not JSON (response format ${format.name})`;
  }
  let check: SchemaCheck;
  try {
    check = compileUserSchema(format.schema, "response_format.schema");
  } catch (error) {
    // A format accepted before today's bounds (an agent's, stored earlier) ends the turn as a
    // mismatch the client can read, not as an internal failure.
    if (!isTetherError(error, "invalid_argument")) throw error;
    return `response format ${format.name} cannot be checked: ${error.message}`;
  }
  const mismatch = check(value);
  if (mismatch === undefined) return undefined;
  const where = mismatch.path === "" ? "the answer" : mismatch.path;
  return `the answer does not match response format ${format.name}: ${where} ${mismatch.message}`;
}
