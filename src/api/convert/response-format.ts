// TurnOptions.response_format (and an agent's) at the edge: checked once, schema compiled, so a
// bad one is refused naming its field and never reaches a turn.
import type { JsonValue } from "../../domain/conversation.js";
import { invalidArgument } from "../../domain/errors.js";
import type { ResponseFormat as ResponseFormatPb } from "../../gen/tether/v1/turn_pb.js";
import {
  compileResponseFormat,
  RESPONSE_FORMAT_NAME,
  type ResponseFormat,
} from "../../runtime/index.js";

export function responseFormatFromProto(format: ResponseFormatPb): ResponseFormat {
  const field = "options.response_format";
  const name = format.name === "" ? "response" : format.name;
  if (!RESPONSE_FORMAT_NAME.test(name)) {
    throw invalidArgument(`${field}.name`, "must be 1-64 letters, digits, '_' or '-'");
  }
  let schema: unknown;
  try {
    schema = JSON.parse(format.jsonSchema);
  } catch {
    throw invalidArgument(`${field}.json_schema`, "must be JSON");
  }
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw invalidArgument(`${field}.json_schema`, "must be a JSON object");
  }
  const typed = schema as { [key: string]: JsonValue };
  try {
    compileResponseFormat(typed);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalidArgument(`${field}.json_schema`, `is not a usable JSON schema: ${reason}`);
  }
  return { name, schema: typed };
}
