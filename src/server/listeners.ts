// One port for gRPC, gRPC-Web and Connect. Plaintext: each connection's first bytes are sniffed;
// the HTTP/2 preface goes to an h2c server, anything else to an HTTP/1.1 server (curl, browsers,
// gRPC-Web proxies). TLS: ALPN picks h2 or http/1.1 on one secure server. Connections are tracked
// so shutdown can be graceful (GOAWAY, finish in-flight) and, separately, forced, and each is
// bounded in time and number by connection-guard.ts (ADR 0030). Requests under `/v1` go to the
// OpenAI-compatible front door instead of Connect, on either protocol (ADR 0037).
import { readFileSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import type { connectNodeAdapter } from "@connectrpc/connect-node";
import type { ConnectionLimits } from "./connection-config.js";
import type { CorsLayer } from "./cors.js";
import {
  createAddressCap,
  createCallCounter,
  guardSession,
  http2Options,
  type CallCounter,
} from "./connection-guard.js";

/** The request handler connectNodeAdapter returns (its type is not exported by name). */
type NodeHandlerFn = ReturnType<typeof connectNodeAdapter>;

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export interface ListenOptions {
  host: string;
  port: number;
  tls?: { certFile: string; keyFile: string } | undefined;
  handler: NodeHandlerFn;
  /** Serves `/v1` and everything under it (the OpenAI-compatible front door, ADR 0037). */
  frontDoor?: HttpHandler | undefined;
  /** Answers CORS preflights and marks answers to allowed origins, on every path (ADR 0039). */
  cors?: CorsLayer | undefined;
  limits: ConnectionLimits;
}

/** A plain Node request handler, HTTP/1.1 or HTTP/2. */
export type HttpHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

/** `/v1`, `/v1/…` or `/v1?…`: never a gRPC or Connect path, which is `/<package.Service>/<Method>`. */
export function isFrontDoorPath(url: string | undefined): boolean {
  return url !== undefined && /^\/v1(?:[/?]|$)/u.test(url);
}

export interface Listener {
  readonly port: number;
  /** Calls being handled now. */
  inFlight(): number;
  /** Stops accepting, asks every connection to finish (GOAWAY / close when idle). */
  stopAccepting(): void;
  /** Resolves when no call is in flight, or after `timeoutMs`; true when drained. */
  waitForIdle(timeoutMs: number): Promise<boolean>;
  /** Destroys every connection at once. */
  forceClose(): void;
}

export async function startListener(options: ListenOptions): Promise<Listener> {
  let inFlight = 0;
  const idleWaiters = new Set<() => void>();
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.Http2Session>();
  let accepting = true;
  const { limits } = options;
  // HTTP/1.1 connections by their socket; HTTP/2 sessions count their own streams.
  const h1Calls = new WeakMap<net.Socket, CallCounter>();
  const guardH1 = (socket: net.Socket) => {
    const calls = createCallCounter(limits, () => socket.destroy());
    h1Calls.set(socket, calls);
    socket.once("close", () => calls.dispose());
  };

  // Counted at the HTTP layer so every protocol and every service is covered.
  const counted = (
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ) => {
    inFlight++;
    const calls = "stream" in req ? undefined : h1Calls.get(req.socket);
    calls?.opened();
    res.once("close", () => {
      calls?.closed();
      inFlight--;
      if (inFlight === 0) for (const wake of idleWaiters) wake();
    });
    const dispatch = () => {
      if (options.frontDoor && isFrontDoorPath(req.url)) options.frontDoor(req, res);
      else options.handler(req, res);
    };
    if (options.cors) options.cors(req, res, dispatch);
    else dispatch();
  };

  const sessionsClosed = (timeoutMs: number): Promise<void> => {
    const open = [...sessions].filter((session) => !session.destroyed);
    if (open.length === 0 || timeoutMs <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      void Promise.all(open.map((session) => new Promise((r) => session.once("close", r)))).then(
        () => {
          clearTimeout(timer);
          resolve();
        },
      );
    });
  };

  const trackSession = (session: http2.Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    guardSession(session, limits);
    if (!accepting) session.close();
  };

  let server: net.Server;
  let h1: http.Server | undefined;
  if (options.tls) {
    const secure = http2.createSecureServer(
      {
        cert: readFileSync(options.tls.certFile),
        key: readFileSync(options.tls.keyFile),
        allowHTTP1: true,
        handshakeTimeout: limits.handshakeTimeoutMs,
        unknownProtocolTimeout: limits.handshakeTimeoutMs,
        ...http2Options(limits),
      },
      counted,
    );
    secure.on("session", trackSession);
    secure.on("secureConnection", (socket: net.Socket & { alpnProtocol?: string | false }) => {
      if (socket.alpnProtocol !== "h2") guardH1(socket);
    });
    server = secure;
  } else {
    const h2c = http2.createServer(http2Options(limits), counted);
    h2c.on("session", trackSession);
    h1 = http.createServer(counted);
    // Between calls an HTTP/1.1 connection is idle: the one idle timeout applies to both protocols.
    h1.keepAliveTimeout = limits.idleTimeoutMs;
    const plain = h1;
    server = net.createServer((socket) => {
      if (!socket.destroyed) sniff(socket, h2c, plain, limits.handshakeTimeoutMs, guardH1);
    });
  }
  const cap = createAddressCap(limits.maxConnectionsPerAddress);
  // Ahead of the server's own listener, so a connection past the cap is never read.
  server.prependListener("connection", (socket: net.Socket) => {
    if (!cap.admit(socket)) socket.destroy();
  });
  server.on("connection", (socket: net.Socket) => {
    // Streamed events are small frames: send each at once instead of holding it for the
    // previous one's ACK (Nagle), which adds tens of milliseconds to a token's delivery.
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });

  return {
    port: (server.address() as net.AddressInfo).port,
    inFlight: () => inFlight,
    stopAccepting() {
      if (!accepting) return;
      accepting = false;
      server.close();
      for (const session of sessions) session.close();
      h1?.closeIdleConnections();
      // HTTP/1.1 keep-alive connections close after their current response.
      h1?.on("request", (_req, res: http.ServerResponse) => res.setHeader("connection", "close"));
    },
    async waitForIdle(timeoutMs) {
      const until = Date.now() + timeoutMs;
      const idle =
        inFlight === 0 ||
        (await new Promise<boolean>((resolve) => {
          const done = (drained: boolean) => {
            clearTimeout(timer);
            idleWaiters.delete(wake);
            resolve(drained);
          };
          const wake = () => done(true);
          const timer = setTimeout(() => done(inFlight === 0), timeoutMs);
          idleWaiters.add(wake);
        }));
      // A call is done when its response closed, but its last frames (a stream's trailers) may
      // still sit in the socket: HTTP/2 sessions asked to close (GOAWAY) close once those are
      // written, so a forced close after this never cuts a finished call's status.
      if (idle) await sessionsClosed(until - Date.now());
      return idle;
    },
    forceClose() {
      accepting = false;
      server.close();
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
    },
  };
}

/**
 * Reads just enough of a plaintext connection to tell HTTP/2 from HTTP/1.x, then hands it on; a
 * connection that has not told within `timeoutMs` (silent, or stopped inside the preface) is closed.
 */
function sniff(
  socket: net.Socket,
  h2c: http2.Http2Server,
  h1: http.Server,
  timeoutMs: number,
  guardH1: (socket: net.Socket) => void,
): void {
  const timer = setTimeout(() => socket.destroy(), timeoutMs).unref();
  socket.once("close", () => clearTimeout(timer));
  let seen = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, H2_PREFACE.length);
    const isPrefix = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
    if (isPrefix && seen.length < H2_PREFACE.length) return; // need more bytes to decide
    socket.off("data", onData);
    clearTimeout(timer);
    socket.pause();
    // Both servers start from the socket's buffered data, so the sniffed bytes go back into it
    // and the connection stays a native socket (HTTP/2 then runs on the native handle).
    socket.unshift(seen);
    if (isPrefix) {
      h2c.emit("connection", socket);
    } else {
      guardH1(socket);
      h1.emit("connection", socket);
      socket.resume();
    }
  };
  socket.on("data", onData);
  socket.on("error", () => socket.destroy());
}
