// TurnOptions.response_format at the edge: a good format becomes the domain's (name defaulted,
// schema parsed), and each bad field is refused naming it under options.response_format.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import { responseFormatFromProto } from "../../../../src/api/convert/response-format.js";
import { ResponseFormatSchema } from "../../../../src/gen/tether/v1/turn_pb.js";
import { expectRefusal } from "./support.js";

const format = (name: string, jsonSchema: string) =>
  create(ResponseFormatSchema, { name, jsonSchema });

describe("ResponseFormat", () => {
  test("a named format keeps its name and its schema as JSON", () => {
    const schema = '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}';
    expect(responseFormatFromProto(format("weather_report-2", schema))).toEqual({
      name: "weather_report-2",
      schema: {
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
      },
    });
  });

  test("an unnamed format is called response", () => {
    expect(responseFormatFromProto(format("", '{"type":"array"}'))).toEqual({
      name: "response",
      schema: { type: "array" },
    });
  });

  test.each(["has space", "dot.ted", "x".repeat(65)])("the name %j is refused", (name) => {
    const error = expectRefusal(
      () => responseFormatFromProto(format(name, "{}")),
      "options.response_format.name",
    );
    expect(error.violations[0]?.description).toBe("must be 1-64 letters, digits, '_' or '-'");
  });

  test("a name of 64 characters is accepted", () => {
    expect(responseFormatFromProto(format("n".repeat(64), "{}")).name).toBe("n".repeat(64));
  });

  test.each([
    ["{not json", "must be JSON"],
    ["", "must be JSON"],
    ["[]", "must be a JSON object"],
    ["null", "must be a JSON object"],
    ['"object"', "must be a JSON object"],
  ])("the schema %j is refused: %s", (jsonSchema, description) => {
    const error = expectRefusal(
      () => responseFormatFromProto(format("r", jsonSchema)),
      "options.response_format.json_schema",
    );
    expect(error.violations[0]?.description).toBe(description);
  });

  test("a JSON object that is no usable schema is refused with the compiler's reason", () => {
    const error = expectRefusal(
      () => responseFormatFromProto(format("r", '{"type":"no-such-type"}')),
      "options.response_format.json_schema",
    );
    expect(error.violations[0]?.description).toMatch(/^is not a usable JSON schema: ./u);
  });
});
