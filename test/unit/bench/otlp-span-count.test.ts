// The benchmarks' OTLP receiver counts spans without decoding them
// (bench/support/otlp-span-count.ts): the count must equal what a full decode finds, whatever
// else the export carries.
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { countJsonSpans, countProtobufSpans } from "../../../bench/support/otlp-span-count.js";

// Enough of opentelemetry-proto's trace messages to build exports with every kind of field the
// counter must step over: nested messages, varints, fixed64 times, bytes, strings, doubles.
const PROTO = `
syntax = "proto3";
message ExportRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { Scope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message Scope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; repeated Event events = 11; repeated Link links = 13;
  Status status = 15; fixed32 flags = 16;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; repeated KeyValue attributes = 4; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
`;
const ExportRequest = protobuf.parse(PROTO).root.lookupType("ExportRequest");

function span(n: number) {
  return {
    traceId: Buffer.alloc(16, n + 1),
    spanId: Buffer.alloc(8, n + 2),
    parentSpanId: Buffer.alloc(8, n + 3),
    name: `span ${n}`,
    kind: 2,
    startTimeUnixNano: 1_700_000_000_000_000_000n.toString(),
    endTimeUnixNano: 1_700_000_000_100_000_000n.toString(),
    attributes: [
      { key: "gen_ai.operation.name", value: { stringValue: "chat" } },
      { key: "gen_ai.usage.input_tokens", value: { intValue: 40 + n } },
      { key: "ratio", value: { doubleValue: 0.5 } },
      { key: "ok", value: { boolValue: true } },
    ],
    events: [{ timeUnixNano: "1", name: "gen_ai.choice", attributes: [] }],
    links: [{ traceId: Buffer.alloc(16, 9), spanId: Buffer.alloc(8, 9) }],
    status: { code: 2, message: "failed" },
    flags: 0x301,
  };
}

/** An export of the given shape: per resource, per scope, that many spans. */
function exportOf(shape: number[][]): { bytes: Uint8Array; spans: number; json: string } {
  let next = 0;
  const request = {
    resourceSpans: shape.map((scopes) => ({
      resource: {
        attributes: [{ key: "service.name", value: { stringValue: "tether" } }],
        droppedAttributesCount: 1,
      },
      scopeSpans: scopes.map((count) => ({
        scope: { name: "tether", version: "1" },
        spans: Array.from({ length: count }, () => span(next++)),
        schemaUrl: "https://opentelemetry.io/schemas/1.37.0",
      })),
      schemaUrl: "https://opentelemetry.io/schemas/1.37.0",
    })),
  };
  const bytes = ExportRequest.encode(ExportRequest.fromObject(request)).finish();
  const decoded = ExportRequest.toObject(ExportRequest.decode(bytes), { arrays: true }) as {
    resourceSpans: { scopeSpans: { spans: unknown[] }[] }[];
  };
  const spans = decoded.resourceSpans
    .flatMap((rs) => rs.scopeSpans)
    .reduce((sum, ss) => sum + ss.spans.length, 0);
  return { bytes, spans, json: JSON.stringify(request) };
}

describe("counting OTLP spans without decoding them", () => {
  it("counts what a full decode finds, across resources, scopes and every field type", () => {
    for (const shape of [[[1]], [[3, 0, 2]], [[512], [1, 7]], [[], [4]], []]) {
      const { bytes, spans, json } = exportOf(shape);
      expect(countProtobufSpans(bytes)).toBe(spans);
      expect(countJsonSpans(json)).toBe(spans);
    }
    expect(exportOf([[512], [1, 7]]).spans).toBe(520);
  });

  it("refuses a cut body rather than miscounting it", () => {
    const { bytes } = exportOf([[3]]);
    expect(() => countProtobufSpans(bytes.subarray(0, bytes.length - 5))).toThrow();
  });
});
