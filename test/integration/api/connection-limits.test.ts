// The connection limits (ADR 0030) against the real server, with raw sockets: what does nothing is
// closed, one address holds only so many connections, an HTTP/2 session gets only so many streams
// and no reset flood, and an open call is never cut for being quiet.
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as http2 from "node:http2";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ServingStatus } from "../../../src/api/health-service.js";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../../src/gen/grpc/health/v1/health_pb.js";
import { afterEach, describe, expect, it } from "vitest";
import { createTurnService } from "../../../src/api/turn-service.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { createEchoProvider } from "../../../src/providers/scripted.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import {
  closesWithin,
  connectRawH2,
  FrameType,
  grpcHeaders,
  H2_PREFACE,
  REFUSED_STREAM,
  rstStream,
} from "../../support/raw-h2.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { sleep, waitFor } from "../../support/wait-for.js";

const SHORT = {
  TETHER_HANDSHAKE_TIMEOUT_MS: "300",
  TETHER_HEADERS_TIMEOUT_MS: "300",
  TETHER_IDLE_TIMEOUT_MS: "300",
};
// Far beyond the 300 ms timeouts: a socket still open by then was never going to be closed.
const GENEROUS_MS = 5_000;
const HEALTH_CHECK = "/grpc.health.v1.Health/Check";

let h: ApiServerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function rawSocket(port: number): { socket: net.Socket; closed: Promise<void> } {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  return { socket, closed: new Promise((resolve) => socket.once("close", () => resolve())) };
}

/** One health check on a connection of its own (HTTP/2), resolving its grpc-status. */
function healthCheck(session: http2.ClientHttp2Session): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": HEALTH_CHECK,
      "content-type": "application/grpc",
      te: "trailers",
    });
    stream.on("trailers", (trailers) => resolve(trailers["grpc-status"] as string | undefined));
    stream.on("error", reject);
    stream.resume();
    stream.end(Buffer.from([0, 0, 0, 0, 0])); // an empty HealthCheckRequest
  });
}

function makeCert(dir: string): { certFile: string; keyFile: string } {
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"]
      .concat(["-addext", "subjectAltName=DNS:localhost"])
      .concat(["-keyout", keyFile, "-out", certFile]),
    { stdio: "ignore" },
  );
  return { certFile, keyFile };
}

describe("timeouts", () => {
  it("closes a silent plaintext socket after the handshake timeout", async () => {
    h = await startApiServer({ env: SHORT });
    const { closed } = rawSocket(h.server.port);
    expect(await closesWithin(closed, GENEROUS_MS)).toBe(true);
  });

  it("closes a socket that stops halfway through the HTTP/2 preface", async () => {
    h = await startApiServer({ env: SHORT });
    const { socket, closed } = rawSocket(h.server.port);
    socket.write(H2_PREFACE.subarray(0, 12));
    expect(await closesWithin(closed, GENEROUS_MS)).toBe(true);
  });

  it("closes an HTTP/2 session that never opens a stream, and one idle after its last call", async () => {
    h = await startApiServer({ env: SHORT });
    const silent = await connectRawH2(h.server.port);
    const used = http2.connect(`http://127.0.0.1:${h.server.port}`);
    used.on("error", () => undefined);
    const usedClosed = new Promise<void>((resolve) => used.once("close", () => resolve()));
    expect(await healthCheck(used)).toBe("0");
    expect(await closesWithin(silent.closed, GENEROUS_MS)).toBe(true);
    expect(await closesWithin(usedClosed, GENEROUS_MS)).toBe(true);
  });

  it("closes an HTTP/1.1 connection that sends half its headers", async () => {
    h = await startApiServer({ env: SHORT });
    const { socket, closed } = rawSocket(h.server.port);
    socket.write("POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: x\r\n");
    expect(await closesWithin(closed, GENEROUS_MS)).toBe(true);
  });

  it("closes a silent TLS socket after the handshake timeout", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tether-tls-idle-"));
    try {
      const certFile = join(dir, "cert.pem");
      const keyFile = join(dir, "key.pem");
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-days",
          "1",
          "-subj",
          "/CN=localhost",
        ].concat(["-keyout", keyFile, "-out", certFile]),
        { stdio: "ignore" },
      );
      h = await startApiServer({
        env: { ...SHORT, TETHER_TLS_CERT_FILE: certFile, TETHER_TLS_KEY_FILE: keyFile },
      });
      const { closed } = rawSocket(h.server.port);
      expect(await closesWithin(closed, GENEROUS_MS)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps a WatchSession stream that stays quiet far longer than the idle timeout", async () => {
    const { runtime } = createRuntimeHarness({ provider: createEchoProvider() });
    h = await startApiServer({
      env: SHORT,
      routes: (router) => router.service(TurnService, createTurnService({ runtime })),
    });
    const baseUrl = `http://127.0.0.1:${h.server.port}`;
    const sessionId = `idle-${randomUUID()}`;
    const runTurn = async (text: string) => {
      // A connection of its own each time, so the watcher's connection carries only the watch.
      const turns = createClient(TurnService, createGrpcTransport({ baseUrl }));
      let cursor = 0n;
      for await (const r of turns.streamTurn({
        sessionId,
        input: [{ kind: { case: "text", value: text } }],
      })) {
        cursor = r.event?.cursor ?? cursor;
      }
      return cursor;
    };
    const after = await runTurn("first");
    const watcher = createClient(TurnService, createGrpcTransport({ baseUrl }));
    const seen = (async () => {
      const events: string[] = [];
      for await (const r of watcher.watchSession({
        sessionId,
        afterCursor: after,
        untilTurnCompleted: true,
      })) {
        events.push(r.event?.event.case ?? "");
      }
      return events;
    })();
    // Five times the idle timeout with nothing on the watcher's connection.
    await sleep(1_500);
    await runTurn("second");
    expect(await seen).toContain("turnCompleted");
  });

  it.each([
    ["HTTP/1.1", false, "1.1"],
    ["h2c", false, "2"],
    ["HTTP/1.1 over TLS", true, "1.1"],
    ["HTTP/2 over TLS", true, "2"],
  ] as const)(
    "keeps a quiet Health.Watch stream open past every timeout over %s",
    async (_name, tls, httpVersion) => {
      const dir = mkdtempSync(join(tmpdir(), "tether-quiet-"));
      try {
        const cert = tls ? makeCert(dir) : undefined;
        h = await startApiServer({
          env: {
            ...SHORT,
            ...(cert && { TETHER_TLS_CERT_FILE: cert.certFile, TETHER_TLS_KEY_FILE: cert.keyFile }),
          },
        });
        const transport = createConnectTransport({
          baseUrl: `${tls ? "https" : "http"}://localhost:${h.server.port}`,
          httpVersion,
          ...(cert && { nodeOptions: { ca: readFileSync(cert.certFile) } }),
        });
        const seen: Status[] = [];
        const watching = (async () => {
          for await (const r of createClient(Health, transport).watch({ service: "" })) {
            seen.push(r.status);
            if (r.status === Status.NOT_SERVING) return;
          }
        })();
        await waitFor(() => seen.length === 1, {
          what: "the watch's first status",
          timeoutMs: GENEROUS_MS,
        });
        // Five times every timeout with nothing sent on the stream's connection.
        await sleep(1_500);
        h.server.health.setAll(ServingStatus.NOT_SERVING);
        await watching;
        expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("limits", () => {
  it("closes connections past the per-address cap while the ones it holds keep working", async () => {
    h = await startApiServer({ env: { TETHER_MAX_CONNECTIONS_PER_ADDRESS: "2" } });
    const url = `http://127.0.0.1:${h.server.port}`;
    const first = http2.connect(url);
    const second = http2.connect(url);
    expect(await healthCheck(first)).toBe("0");
    expect(await healthCheck(second)).toBe("0");
    const third = rawSocket(h.server.port);
    expect(await closesWithin(third.closed, GENEROUS_MS)).toBe(true);
    expect(await healthCheck(first)).toBe("0");
    // A closed connection frees its place.
    const freed = new Promise((resolve) => second.once("close", resolve));
    second.close();
    await freed;
    const fourth = http2.connect(url);
    expect(await healthCheck(fourth)).toBe("0");
    first.close();
    fourth.close();
  });

  it("refuses HTTP/2 streams past the concurrent stream cap", async () => {
    h = await startApiServer({ env: { TETHER_HTTP2_MAX_CONCURRENT_STREAMS: "5" } });
    const raw = await connectRawH2(h.server.port);
    const opened = Array.from({ length: 30 }, (_, i) =>
      grpcHeaders(1 + 2 * i, "/grpc.health.v1.Health/Watch"),
    );
    raw.socket.write(Buffer.concat(opened));
    await waitFor(
      () =>
        raw.frames.some(
          (f) => f.type === FrameType.RST_STREAM && f.payload.readUInt32BE(0) === REFUSED_STREAM,
        ),
      { what: "a stream refused with REFUSED_STREAM", timeoutMs: GENEROUS_MS },
    );
    raw.socket.destroy();
  });

  it("cuts off a session that resets streams as fast as it opens them", async () => {
    h = await startApiServer({ env: { TETHER_HTTP2_MAX_RESETS_PER_SECOND: "100" } });
    const raw = await connectRawH2(h.server.port);
    let next = 1;
    for (let round = 0; round < 50 && !raw.socket.destroyed; round++) {
      const burst: Buffer[] = [];
      for (let i = 0; i < 200; i++, next += 2) {
        burst.push(grpcHeaders(next, "/grpc.health.v1.Health/Watch"), rstStream(next));
      }
      raw.socket.write(Buffer.concat(burst));
      await sleep(20);
    }
    expect(await closesWithin(raw.closed, GENEROUS_MS)).toBe(true);
  });
});
