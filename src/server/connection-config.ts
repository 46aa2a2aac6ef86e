// How long a connection may stay open without doing anything, how many one address may hold, and
// what one HTTP/2 session may ask for (ADR 0030). Read apart from config.ts so the hot file gains
// one line; every value is a TETHER_* variable with a default that keeps an unauthenticated
// client from holding file descriptors for long.
import { integer, type Env } from "./env-values.js";

export interface ConnectionLimits {
  /**
   * From accept until the connection says what it speaks: the TLS handshake, or on the plaintext
   * port the first bytes (an HTTP/2 preface or an HTTP/1.1 request line).
   */
  handshakeTimeoutMs: number;
  /** From then until its first complete request (HTTP/1.1 headers, or an HTTP/2 stream). */
  headersTimeoutMs: number;
  /** A connection with no call open for this long is closed (GOAWAY for HTTP/2). */
  idleTimeoutMs: number;
  /** Open connections one remote address may hold; past it new ones are closed. 0: no cap. */
  maxConnectionsPerAddress: number;
  /** SETTINGS_MAX_CONCURRENT_STREAMS of every HTTP/2 session; streams past it are refused. */
  maxConcurrentStreams: number;
  /** Refused streams one session may open before it is closed (Node's maxSessionRejectedStreams). */
  maxRejectedStreams: number;
  /** Invalid frames one session may send before it is closed (Node's maxSessionInvalidFrames). */
  maxInvalidFrames: number;
  /** Streams one session may reset (RST_STREAM) within a second before it is closed. */
  maxResetsPerSecond: number;
}

const HOUR_MS = 60 * 60 * 1000;

export function loadConnectionLimits(env: Env): ConnectionLimits {
  return {
    handshakeTimeoutMs: integer(env, "TETHER_HANDSHAKE_TIMEOUT_MS", 10_000, 50, HOUR_MS),
    headersTimeoutMs: integer(env, "TETHER_HEADERS_TIMEOUT_MS", 20_000, 50, HOUR_MS),
    idleTimeoutMs: integer(env, "TETHER_IDLE_TIMEOUT_MS", 120_000, 50, 24 * HOUR_MS),
    maxConnectionsPerAddress: integer(env, "TETHER_MAX_CONNECTIONS_PER_ADDRESS", 256, 0, 1e6),
    maxConcurrentStreams: integer(env, "TETHER_HTTP2_MAX_CONCURRENT_STREAMS", 1_000, 1, 2 ** 31),
    maxRejectedStreams: integer(env, "TETHER_HTTP2_MAX_REJECTED_STREAMS", 100, 0, 1e6),
    maxInvalidFrames: integer(env, "TETHER_HTTP2_MAX_INVALID_FRAMES", 1_000, 0, 1e6),
    maxResetsPerSecond: integer(env, "TETHER_HTTP2_MAX_RESETS_PER_SECOND", 200, 1, 1e6),
  };
}
