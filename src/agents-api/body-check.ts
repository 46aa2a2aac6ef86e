// Request bodies checked once, at the edge, by JSON Schema (ajv): the first refusal becomes a 400
// whose `param` names the field as the client wrote it (`tools[2].type`, `metadata`), ADR 0037.
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { invalidArgument } from "../domain/errors.js";

const ajv = new Ajv({ allErrors: false, strict: false });

export type BodyCheck<T> = (value: unknown, prefix?: string) => T;

/** A checker for `schema`; `prefix` names where the value sits in the body (`tools[0]`). */
export function bodyCheck<T>(schema: object): BodyCheck<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  return (value, prefix = "") => {
    if (validate(value)) return value as T;
    const [error] = validate.errors ?? [];
    throw refusal(error, prefix);
  };
}

function refusal(error: ErrorObject | undefined, prefix: string) {
  if (!error) return invalidArgument(prefix || "body", "is not valid");
  const segments = error.instancePath.split("/").slice(1);
  const params = error.params as { additionalProperty?: string; missingProperty?: string };
  if (error.keyword === "additionalProperties" && params.additionalProperty) {
    segments.push(params.additionalProperty);
    return invalidArgument(fieldOf(prefix, segments), "is not a field Tether accepts here");
  }
  if (error.keyword === "required" && params.missingProperty) {
    segments.push(params.missingProperty);
    return invalidArgument(fieldOf(prefix, segments), "is required");
  }
  return invalidArgument(fieldOf(prefix, segments) || "body", error.message ?? "is not valid");
}

/** `["tools", "2", "type"]` under `""` → `tools[2].type`. */
export function fieldOf(prefix: string, segments: readonly string[]): string {
  let field = prefix;
  for (const raw of segments) {
    const segment = raw.replace(/~1/gu, "/").replace(/~0/gu, "~");
    if (/^\d+$/u.test(segment)) field += `[${segment}]`;
    else field += field === "" ? segment : `.${segment}`;
  }
  return field;
}
