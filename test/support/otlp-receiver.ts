// A small OTLP/HTTP trace receiver for tests: a server on 127.0.0.1:0 that takes POST /v1/traces
// as protobuf (decoded with protobufjs against the message definitions below) or as JSON, and
// keeps every span in one plain shape, so a test asserts the same thing for either protocol.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import protobuf from "protobufjs";

// The subset of the OTLP trace messages (opentelemetry-proto, trace/v1 and common/v1) a test
// reads, with the field numbers of the wire format. Fields left out are skipped by the decoder.
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message ExportRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { Scope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message Scope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  repeated Event events = 11;
  repeated Link links = 13;
  Status status = 15;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; repeated KeyValue attributes = 4; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
`;

const ExportRequest = protobuf.parse(OTLP_TRACE_PROTO).root.lookupType("otlp.ExportRequest");

export type AttributeValue = string | number | boolean | AttributeValue[] | null;

/** OTLP span kinds by number (SPAN_KIND_*). */
export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, AttributeValue>;
  events: { name: string; attributes: Record<string, AttributeValue> }[];
  links: { traceId: string; spanId: string }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, AttributeValue>;
  schemaUrl: string;
}

export interface OtlpRequestRecord {
  contentType: string;
  path: string;
  /** The Authorization header, when one was sent (OTEL_EXPORTER_OTLP_HEADERS). */
  authorization?: string;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port>: what OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly requests: OtlpRequestRecord[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/** protobufjs gives bytes as base64 (toObject below); OTLP/JSON gives ids as hex already. */
function hexId(value: unknown, fromProto: boolean): string {
  if (typeof value !== "string") return "";
  return fromProto ? Buffer.from(value, "base64").toString("hex") : value.toLowerCase();
}

function valueOf(any: Json | undefined): AttributeValue {
  if (any === undefined) return null;
  const pick = (snake: string, camel: string): unknown => any[camel] ?? any[snake];
  const str = pick("string_value", "stringValue");
  if (str !== undefined) return str as string;
  const bool = pick("bool_value", "boolValue");
  if (bool !== undefined) return bool as boolean;
  const int = pick("int_value", "intValue");
  if (int !== undefined) return Number(int);
  const dbl = pick("double_value", "doubleValue");
  if (dbl !== undefined) return Number(dbl);
  const arr = pick("array_value", "arrayValue") as Json | undefined;
  if (arr !== undefined) return list(arr.values).map(valueOf);
  return null;
}

function attributesOf(values: unknown): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list(values)) out[kv.key as string] = valueOf(kv.value as Json | undefined);
  return out;
}

/** Both encodings decoded to one shape (protobufjs keeps camelCase names, as OTLP/JSON does). */
function spansOf(request: Json, fromProto: boolean): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of list(request.resourceSpans)) {
    const resource = attributesOf((rs.resource as Json | undefined)?.attributes);
    for (const ss of list(rs.scopeSpans)) {
      for (const s of list(ss.spans)) {
        spans.push({
          traceId: hexId(s.traceId, fromProto),
          spanId: hexId(s.spanId, fromProto),
          parentSpanId: hexId(s.parentSpanId, fromProto),
          name: s.name as string,
          kind: Number(s.kind ?? 0),
          attributes: attributesOf(s.attributes),
          events: list(s.events).map((e) => ({
            name: e.name as string,
            attributes: attributesOf(e.attributes),
          })),
          links: list(s.links).map((l) => ({
            traceId: hexId(l.traceId, fromProto),
            spanId: hexId(l.spanId, fromProto),
          })),
          statusCode: Number((s.status as Json | undefined)?.code ?? 0),
          resource,
          schemaUrl: (ss.schemaUrl as string | undefined) ?? "",
        });
      }
    }
  }
  return spans;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpRequestRecord[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const contentType = req.headers["content-type"] ?? "";
      const { authorization } = req.headers;
      requests.push({
        contentType,
        path: req.url ?? "",
        ...(authorization !== undefined && { authorization }),
      });
      const fromProto = contentType.startsWith("application/x-protobuf");
      const request = fromProto
        ? (ExportRequest.toObject(ExportRequest.decode(body), {
            longs: String,
            bytes: String,
            defaults: false,
            arrays: true,
          }) as Json)
        : (JSON.parse(body.toString("utf8")) as Json);
      spans.push(...spansOf(request, fromProto));
      res.writeHead(200, {
        "content-type": fromProto ? "application/x-protobuf" : "application/json",
      });
      res.end(fromProto ? Buffer.alloc(0) : "{}");
    })().catch(() => {
      res.writeHead(400);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
