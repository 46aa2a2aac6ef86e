// Counts the spans of an OTLP/HTTP export without decoding them: an ExportTraceServiceRequest
// is resource_spans (field 1) holding scope_spans (field 2) holding spans (field 2), so walking
// the tags of those two levels and skipping every other field's bytes finds each span. The
// benchmarks' receiver pays a few tag reads per span instead of a full decode, so what it costs
// stays small beside the server it measures.

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;

/** Reads a varint at `at`: [value, next offset]. Lengths and tags fit in 2^53 by far. */
function varint(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  let i = at;
  for (;;) {
    if (i >= bytes.length) throw new Error("OTLP body ends inside a varint");
    const byte = bytes[i++] ?? 0;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, i];
    scale *= 128;
  }
}

/**
 * Calls `onField` for each length-delimited field of the message in bytes[start, end) and skips
 * the others; throws on a malformed body rather than miscounting.
 */
function eachLenField(
  bytes: Uint8Array,
  start: number,
  end: number,
  onField: (field: number, from: number, to: number) => void,
): void {
  let at = start;
  while (at < end) {
    const [tag, afterTag] = varint(bytes, at);
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (wireType === LEN) {
      const [length, from] = varint(bytes, afterTag);
      at = from + length;
      if (at > end) throw new Error("OTLP field runs past its message");
      onField(field, from, at);
    } else if (wireType === VARINT) at = varint(bytes, afterTag)[1];
    else if (wireType === FIXED64) at = afterTag + 8;
    else if (wireType === FIXED32) at = afterTag + 4;
    else throw new Error(`OTLP body has wire type ${wireType}`);
  }
  if (at !== end) throw new Error("OTLP message ends inside a field");
}

const RESOURCE_SPANS = 1;
const SCOPE_SPANS = 2;
const SPANS = 2;

/** The number of spans in a protobuf ExportTraceServiceRequest body. */
export function countProtobufSpans(bytes: Uint8Array): number {
  let spans = 0;
  eachLenField(bytes, 0, bytes.length, (field, from, to) => {
    if (field !== RESOURCE_SPANS) return;
    eachLenField(bytes, from, to, (inner, innerFrom, innerTo) => {
      if (inner !== SCOPE_SPANS) return;
      eachLenField(bytes, innerFrom, innerTo, (leaf) => {
        if (leaf === SPANS) spans += 1;
      });
    });
  });
  return spans;
}

type Json = Record<string, unknown>;
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/** The number of spans in an OTLP/JSON body (the JSON protocol is parsed: it is the rare one). */
export function countJsonSpans(text: string): number {
  let spans = 0;
  for (const rs of list((JSON.parse(text) as Json).resourceSpans)) {
    for (const ss of list(rs.scopeSpans)) spans += list(ss.spans).length;
  }
  return spans;
}
