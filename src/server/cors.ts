// Browsers calling Tether from another origin (ADR 0039): the OpenAI SDKs in a web page (the front
// door) and Connect or gRPC-Web clients (every other path). Off unless TETHER_CORS_ORIGINS names
// the origins; then the maintained `cors` middleware answers preflights and marks answers. No
// credentials mode: callers authenticate with a bearer key in a header, never with cookies.
import type * as http from "node:http";
import type * as http2 from "node:http2";
import cors from "cors";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;

/** Runs `next` for a request the CORS layer does not answer itself (a preflight it does). */
export type CorsLayer = (req: Request, res: Response, next: () => void) => void;

/**
 * What a browser script may read of an answer besides the safelisted headers: the door's request
 * id and retry hints, and the status trailers-as-headers of Connect and gRPC-Web.
 */
const EXPOSED_HEADERS = [
  "x-request-id",
  "retry-after",
  "retry-after-ms",
  "x-should-retry",
  "grpc-status",
  "grpc-message",
  "grpc-status-details-bin",
  "connect-content-encoding",
];

/** How long a browser may reuse a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE_S = 600;

/** `*`, or origins such as `https://app.example.com` (scheme, host and port; nothing else). */
export function checkCorsOrigin(origin: string): string {
  if (origin === "*") return origin;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    throw new Error(`"${origin}" is not an origin (scheme://host[:port])`);
  }
  if (!["http:", "https:"].includes(parsed.protocol) || parsed.origin !== origin) {
    throw new Error(`"${origin}" is not an origin (scheme://host[:port], no path or trailing /)`);
  }
  return origin;
}

/** The CORS layer for these origins; undefined when none is configured (no CORS headers at all). */
export function createCorsLayer(origins: readonly string[]): CorsLayer | undefined {
  if (origins.length === 0) return undefined;
  const middleware = cors({
    origin: origins.includes("*") ? "*" : [...origins],
    methods: ["GET", "POST", "DELETE"],
    // Unset: a preflight's Access-Control-Request-Headers are allowed as asked (Authorization,
    // Idempotency-Key, the SDKs' own, Connect's and gRPC-Web's).
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    // The middleware only reads the method and headers and writes headers and the end of a
    // preflight: HTTP/2's compatibility request and response offer the same.
    middleware(req as http.IncomingMessage, res as http.ServerResponse, () => next());
  };
}
