// The TLS listener: gRPC over HTTP/2 and Connect JSON over HTTP/1.1 on one port, negotiated by
// ALPN, with a throwaway self-signed certificate made by openssl for this run.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckResponse_ServingStatus,
} from "../../../src/gen/grpc/health/v1/health_pb.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";

describe("TLS listener", () => {
  const dir = mkdtempSync(join(tmpdir(), "tether-tls-"));
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  let h: ApiServerHarness;
  let ca: Buffer;

  beforeAll(async () => {
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
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
        "-keyout",
        keyFile,
        "-out",
        certFile,
      ],
      { stdio: "ignore" },
    );
    ca = readFileSync(certFile);
    h = await startApiServer({
      env: { TETHER_TLS_CERT_FILE: certFile, TETHER_TLS_KEY_FILE: keyFile },
    });
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves gRPC over HTTP/2 with TLS", async () => {
    const transport = createGrpcTransport({
      baseUrl: `https://localhost:${h.server.port}`,
      nodeOptions: { ca },
    });
    const health = createClient(Health, transport);
    const reply = await health.check({ service: "" });
    expect(reply.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("serves Connect JSON over HTTP/1.1 with TLS on the same port", async () => {
    const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: "localhost",
          port: h.server.port,
          path: "/tether.v1.SessionService/CreateSession",
          method: "POST",
          ca,
          headers: { "content-type": "application/json" },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ sessionId: "over-tls" }));
    });
    expect(body.status).toBe(200);
    expect(JSON.parse(body.text)).toMatchObject({
      session: { sessionId: "over-tls", headRevision: "1" },
    });
  });

  it("refuses a client that does not trust the certificate", async () => {
    const transport = createGrpcTransport({ baseUrl: `https://localhost:${h.server.port}` });
    await expect(createClient(Health, transport).check({ service: "" })).rejects.toThrow();
  });
});
