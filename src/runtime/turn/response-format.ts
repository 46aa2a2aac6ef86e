// A turn's response format: the JSON schema its final answer must match. The schema is checked
// once, at the edge (compileResponseFormat), and goes to providers that shape output by it
// (ModelCallOptions.responseFormat); whatever the provider did, the final text is checked here
// before the turn finishes, and a mismatch ends the turn failed (response_format_mismatch).
import { Ajv, type ValidateFunction } from "ajv";
import type { JsonValue } from "../../domain/conversation.js";

export interface ResponseFormat {
  /** A name providers show the model (letters, digits, `_` and `-`, at most 64). */
  name: string;
  schema: { [key: string]: JsonValue };
}

export const RESPONSE_FORMAT_NAME = /^[A-Za-z0-9_-]{1,64}$/u;

// One validator instance: compiled schemas are cached by it, so a turn that checks its answer
// after a resume or on another input of the same format compiles nothing again.
const ajv = new Ajv({ allErrors: false, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

/** Throws with the compiler's reason when the schema is not one it can use. */
export function compileResponseFormat(schema: { [key: string]: JsonValue }): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Undefined when `text` is JSON matching the format; else why it is not, for the client. */
export function responseMismatch(format: ResponseFormat, text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `the answer is not JSON (response format ${format.name})`;
  }
  const validate = compileResponseFormat(format.schema);
  if (validate(value)) return undefined;
  const first = validate.errors?.[0];
  const where =
    first?.instancePath === "" || first === undefined ? "the answer" : first.instancePath;
  return `the answer does not match response format ${format.name}: ${where} ${first?.message ?? "is invalid"}`;
}
