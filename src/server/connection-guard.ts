// The timers and counters that keep a connection from holding a file descriptor for nothing
// (ADR 0030): one remote address holds at most so many connections, a connection must get to its
// first request in time, a connection with no call open is closed once idle, and an HTTP/2 session
// that resets streams faster than a client ever needs to is cut off. A call that is open is never
// timed out here: a WatchSession stream may be quiet for hours and still be wanted.
import * as http2 from "node:http2";
import type * as net from "node:net";
import type { ConnectionLimits } from "./connection-config.js";

/** Open calls of one connection: its first-request and idle timers follow them. */
export interface CallCounter {
  opened(): void;
  closed(): void;
  /** The connection is gone: no timer may fire for it any more. */
  dispose(): void;
}

/**
 * Until the first call opens, `close` runs after the headers timeout; whenever the last open call
 * ends, after the idle timeout.
 */
export function createCallCounter(limits: ConnectionLimits, close: () => void): CallCounter {
  let open = 0;
  let timer: NodeJS.Timeout | undefined = setTimeout(close, limits.headersTimeoutMs).unref();
  const stop = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return {
    opened() {
      open++;
      stop();
    },
    closed() {
      open--;
      if (open === 0) timer = setTimeout(close, limits.idleTimeoutMs).unref();
    },
    dispose: stop,
  };
}

/** Counts connections per remote address; `admit` is false past the cap (0: no cap). */
export function createAddressCap(max: number): { admit(socket: net.Socket): boolean } {
  const open = new Map<string, number>();
  return {
    admit(socket) {
      if (max === 0) return true;
      const address = socket.remoteAddress ?? "";
      const held = open.get(address) ?? 0;
      if (held >= max) return false;
      open.set(address, held + 1);
      socket.once("close", () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left === 0) open.delete(address);
        else open.set(address, left);
      });
      return true;
    },
  };
}

/** Node's own HTTP/2 limits, from the configured ones. */
export function http2Options(limits: ConnectionLimits): http2.ServerOptions {
  return {
    settings: { maxConcurrentStreams: limits.maxConcurrentStreams },
    maxSessionRejectedStreams: limits.maxRejectedStreams,
    maxSessionInvalidFrames: limits.maxInvalidFrames,
  };
}

/**
 * Guards one HTTP/2 session: the first-request and idle timers over its streams, and a cut-off
 * for a peer that resets more streams per second than allowed (a "rapid reset" flood makes the
 * server start work for each stream and throw it away; nghttp2 answers one with GOAWAY but leaves
 * the socket open).
 */
export function guardSession(session: http2.Http2Session, limits: ConnectionLimits): void {
  const calls = createCallCounter(limits, () => closeSession(session));
  let windowStart = 0;
  let resets = 0;
  session.on("stream", (stream: http2.Http2Stream) => {
    calls.opened();
    stream.once("close", () => calls.closed());
    stream.once("aborted", () => {
      const now = Date.now();
      if (now - windowStart >= 1000) {
        windowStart = now;
        resets = 0;
      }
      resets++;
      if (resets > limits.maxResetsPerSecond && !session.destroyed) {
        session.destroy(undefined, http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      }
    });
  });
  session.once("close", () => calls.dispose());
}

/** GOAWAY, then the socket goes when the peer does not close it soon. */
function closeSession(session: http2.Http2Session): void {
  if (session.destroyed) return;
  session.close();
  setTimeout(() => session.destroy(), 1000).unref();
}
