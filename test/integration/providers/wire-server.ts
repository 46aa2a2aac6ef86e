// A loopback HTTP server that replays recorded vendor responses: SSE frames, JSON errors, and a
// connection cut mid-stream. It records each request so tests can check what the adapter sent.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface WireReply {
  status?: number;
  headers?: Record<string, string>;
  /** SSE frames, written one at a time. */
  frames?: string[];
  json?: unknown;
  /** Destroy the socket after this many frames, without ending the response. */
  cutAfter?: number;
  /** Write the frames, then keep the response open until the client goes away. */
  hold?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: unknown;
}

export interface WireServer {
  baseURL: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startWireServer(replies: WireReply[], pathPrefix = ""): Promise<WireServer> {
  const requests: RecordedRequest[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: raw === "" ? undefined : (JSON.parse(raw) as unknown),
      });
      const reply = replies[next++] ?? { status: 500, json: { error: "no reply scripted" } };
      void respond(res, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}${pathPrefix}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function respond(res: ServerResponse, reply: WireReply): Promise<void> {
  if (reply.frames === undefined) {
    res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
    res.end(JSON.stringify(reply.json ?? {}));
    return;
  }
  res.writeHead(reply.status ?? 200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    ...reply.headers,
  });
  for (const [i, frame] of reply.frames.entries()) {
    if (reply.cutAfter !== undefined && i >= reply.cutAfter) break;
    await new Promise<void>((resolve) => res.write(frame, () => resolve()));
  }
  if (reply.cutAfter !== undefined) {
    // The connection drops mid-body: ending the socket sends the written frames before its close,
    // so the client reads them first (a destroy right away could discard them unsent).
    const socket = res.socket;
    if (socket) await new Promise<void>((resolve) => socket.end(resolve));
    return;
  }
  if (reply.hold === true) return;
  res.end();
}

/** One SSE frame carrying `data` as JSON (or a literal like [DONE]), with an optional event name. */
export function sse(data: unknown, event?: string): string {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return `${event === undefined ? "" : `event: ${event}\n`}data: ${payload}\n\n`;
}
