// The front door's HTTP plumbing: reading a bounded JSON body once, and writing JSON answers with
// the headers every answer carries. Works on HTTP/1.1 and HTTP/2 requests alike (ADR 0037).
import type * as http from "node:http";
import type * as http2 from "node:http2";
import { invalidArgument } from "../domain/errors.js";

export type HttpRequest = http.IncomingMessage | http2.Http2ServerRequest;
export type HttpResponse = http.ServerResponse | http2.Http2ServerResponse;

/** What both response kinds offer; their own overloads do not unify into one callable type. */
interface Writable {
  readonly headersSent: boolean;
  readonly destroyed: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body?: string): unknown;
}

/** Deeper JSON than this is refused at the edge, so nothing below recurses past the stack. */
const MAX_JSON_DEPTH = 64;

/** Reads the whole body, refusing one larger than `maxBytes` as soon as it is. */
export async function readBody(req: HttpRequest, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > maxBytes) throw invalidArgument("body", `must be at most ${maxBytes} bytes`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The body as JSON (an empty body is `{}`); malformed or too deep JSON is a 400 naming `body`. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidArgument("body", "is not valid JSON");
  }
  if (depthOf(value) > MAX_JSON_DEPTH) {
    throw invalidArgument("body", `must nest at most ${MAX_JSON_DEPTH} levels`);
  }
  return value;
}

/** Nesting depth, without recursion (the value may be as deep as the body allowed). */
function depthOf(root: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[root, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [value, depth] = next;
    if (typeof value !== "object" || value === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return deepest;
}

export function sendJson(
  res: HttpResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  const out = res as unknown as Writable;
  if (out.destroyed) return; // the client is gone: nobody to answer
  if (out.headersSent) {
    out.end();
    return;
  }
  out.writeHead(status, { ...headers, "content-type": "application/json" });
  out.end(JSON.stringify(body));
}
