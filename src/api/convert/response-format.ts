// TurnOptions.response_format (and an agent's) at the edge: checked once, schema bounded and
// compiled (runtime user-schema.ts), so a bad one is refused naming its field and never reaches
// a turn.
import { invalidArgument } from "../../domain/errors.js";
import type { ResponseFormat as ResponseFormatPb } from "../../gen/tether/v1/turn_pb.js";
import {
  checkResponseFormat,
  parseUserSchema,
  RESPONSE_FORMAT_NAME,
  type ResponseFormat,
} from "../../runtime/index.js";

export function responseFormatFromProto(format: ResponseFormatPb): ResponseFormat {
  const field = "options.response_format";
  const name = format.name === "" ? "response" : format.name;
  if (!RESPONSE_FORMAT_NAME.test(name)) {
    throw invalidArgument(`${field}.name`, "must be 1-64 letters, digits, '_' or '-'");
  }
  const schema = parseUserSchema(format.jsonSchema, `${field}.json_schema`);
  checkResponseFormat(schema, `${field}.json_schema`);
  return { name, schema };
}
