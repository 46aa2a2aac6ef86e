// How long a connection may stay open without doing anything, how many one address may hold, and
// what one HTTP/2 session may ask for (ADR 0030). Every value is an entry of the one schema
// (ADR 0033) with a default that keeps an unauthenticated client from holding file descriptors
// for long.
import { integer, variable, type ConfigReader } from "./config-schema.js";

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

export const CONNECTION_VARIABLES = {
  handshakeTimeoutMs: variable(
    "TETHER_HANDSHAKE_TIMEOUT_MS",
    "10000",
    integer(50, HOUR_MS),
    "a connection that has not finished its TLS handshake, or sent the bytes that say HTTP/2 or HTTP/1.1, by then is closed (ADR 0030)",
  ),
  headersTimeoutMs: variable(
    "TETHER_HEADERS_TIMEOUT_MS",
    "20000",
    integer(50, HOUR_MS),
    "then a connection that has not sent its first complete request by then is closed",
  ),
  idleTimeoutMs: variable(
    "TETHER_IDLE_TIMEOUT_MS",
    "120000",
    integer(50, 24 * HOUR_MS),
    "a connection with no call open for this long is closed (an open call, however quiet, never is)",
  ),
  maxConnectionsPerAddress: variable(
    "TETHER_MAX_CONNECTIONS_PER_ADDRESS",
    "256",
    integer(0, 1e6),
    "open connections one remote address may hold; past it new ones are closed; `0`: no cap",
  ),
  maxConcurrentStreams: variable(
    "TETHER_HTTP2_MAX_CONCURRENT_STREAMS",
    "1000",
    integer(1, 2 ** 31),
    "calls open at once on one HTTP/2 connection; streams past it are refused",
  ),
  maxRejectedStreams: variable(
    "TETHER_HTTP2_MAX_REJECTED_STREAMS",
    "100",
    integer(0, 1e6),
    "refused streams one HTTP/2 connection may open before it is closed",
  ),
  maxInvalidFrames: variable(
    "TETHER_HTTP2_MAX_INVALID_FRAMES",
    "1000",
    integer(0, 1e6),
    "invalid frames one HTTP/2 connection may send before it is closed",
  ),
  maxResetsPerSecond: variable(
    "TETHER_HTTP2_MAX_RESETS_PER_SECOND",
    "200",
    integer(1, 1e6),
    "streams one HTTP/2 connection may reset within a second before it is cut off (rapid reset)",
  ),
} as const;

export function loadConnectionLimits(read: ConfigReader): ConnectionLimits {
  const v = CONNECTION_VARIABLES;
  return {
    handshakeTimeoutMs: read.get(v.handshakeTimeoutMs),
    headersTimeoutMs: read.get(v.headersTimeoutMs),
    idleTimeoutMs: read.get(v.idleTimeoutMs),
    maxConnectionsPerAddress: read.get(v.maxConnectionsPerAddress),
    maxConcurrentStreams: read.get(v.maxConcurrentStreams),
    maxRejectedStreams: read.get(v.maxRejectedStreams),
    maxInvalidFrames: read.get(v.maxInvalidFrames),
    maxResetsPerSecond: read.get(v.maxResetsPerSecond),
  };
}
