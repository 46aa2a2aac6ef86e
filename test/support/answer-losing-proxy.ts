// A loopback HTTP proxy in front of the front door that loses answers: it forwards every request
// and, for the first POST of each path and Idempotency-Key it sees, waits for the door's whole
// answer (the door has committed by then) and replies 500 instead. That is a gateway failing after
// forwarding: the SDK retries the POST (same body, same headers) and only the retry's answer
// reaches the client. Every other request is passed through as the door answered it.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface AnswerLosingProxy {
  /** The proxy's base URL (`http://127.0.0.1:<port>`). */
  readonly baseUrl: string;
  /** Requests forwarded to the door, as `METHOD path`, in order. */
  readonly forwarded: string[];
  /** Door answers replaced by a 500. */
  lost(): number;
  close(): Promise<void>;
}

/** Hop-by-hop and framing headers are the proxy's own on each side. */
const NOT_FORWARDED = new Set(["host", "connection", "content-length", "transfer-encoding"]);

export async function startAnswerLosingProxy(doorBaseUrl: string): Promise<AnswerLosingProxy> {
  const seen = new Set<string>();
  const forwarded: string[] = [];
  let lost = 0;
  const server = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (!NOT_FORWARDED.has(name) && typeof value === "string") headers[name] = value;
      }
      const method = req.method ?? "GET";
      const path = req.url ?? "/";
      forwarded.push(`${method} ${path.split("?")[0] ?? path}`);
      const answer = await fetch(`${doorBaseUrl}${path}`, {
        method,
        headers,
        ...(chunks.length > 0 && { body: Buffer.concat(chunks) }),
      });
      const body = Buffer.from(await answer.arrayBuffer());
      const attempt = `${path} ${headers["idempotency-key"] ?? ""}`;
      if (method === "POST" && !seen.has(attempt)) {
        seen.add(attempt);
        lost++;
        res.writeHead(500, { "content-type": "application/json", "retry-after-ms": "10" });
        res.end(JSON.stringify({ error: { message: "bad gateway", type: "server_error" } }));
        return;
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!NOT_FORWARDED.has(name) && name !== "content-encoding") out[name] = value;
      });
      res.writeHead(answer.status, out);
      res.end(body);
    })().catch(() => {
      res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    forwarded,
    lost: () => lost,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
