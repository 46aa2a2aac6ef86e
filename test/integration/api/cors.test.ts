// CORS (ADR 0039): with TETHER_CORS_ORIGINS set, a browser page of a listed origin may call the
// front door and the Connect / gRPC-Web paths: preflights are answered (HTTP/1.1 and HTTP/2), and
// answers carry the origin and the headers a script may read. Other origins get no CORS headers,
// and without the variable nothing changes.
import * as http2 from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/server/config.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";

const APP = "https://app.example.com";
let server: ApiServerHarness | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const preflight = (origin: string, path: string, headers: string) =>
  fetch(`${server!.baseUrl}${path}`, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": headers,
    },
  });

describe("CORS with TETHER_CORS_ORIGINS", () => {
  it("answers a listed origin's preflight for the front door and for Connect, and marks answers", async () => {
    server = await startApiServer({ env: { TETHER_CORS_ORIGINS: `${APP},http://localhost:5173` } });
    const door = await preflight(
      APP,
      "/v1/agents/sessions",
      "authorization,content-type,idempotency-key",
    );
    expect(door.status).toBe(204);
    expect(Object.fromEntries(door.headers)).toMatchObject({
      "access-control-allow-origin": APP,
      "access-control-allow-methods": "GET,POST,DELETE",
      "access-control-allow-headers": "authorization,content-type,idempotency-key",
      "access-control-max-age": "600",
      vary: expect.stringContaining("Origin") as unknown,
    });
    const connect = await preflight(
      "http://localhost:5173",
      "/tether.v1.SessionService/GetSession",
      "connect-protocol-version,content-type",
    );
    expect(connect.status).toBe(204);
    expect(connect.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");

    // The answer itself: the origin, and the request id exposed to the page's script.
    const listed = await fetch(`${server.baseUrl}/v1/agents`, {
      headers: { origin: APP, authorization: "Bearer k" },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("access-control-allow-origin")).toBe(APP);
    expect(listed.headers.get("access-control-expose-headers")).toContain("x-request-id");
    expect(listed.headers.get("x-request-id")).toMatch(/^req_/u);
  });

  it("gives another origin no CORS headers, so its browser refuses the answer", async () => {
    server = await startApiServer({ env: { TETHER_CORS_ORIGINS: APP } });
    const other = await preflight("https://evil.example", "/v1/agents", "authorization");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const answer = await fetch(`${server.baseUrl}/v1/agents`, {
      headers: { origin: "https://evil.example" },
    });
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers a preflight over HTTP/2 too", async () => {
    server = await startApiServer({ env: { TETHER_CORS_ORIGINS: "*" } });
    const session = http2.connect(server.baseUrl);
    try {
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        const req = session.request({
          ":method": "OPTIONS",
          ":path": "/v1/agents",
          origin: APP,
          "access-control-request-method": "GET",
        });
        req.on("response", (h) => {
          resolve(h);
          req.close();
        });
        req.on("error", reject);
        req.end();
      });
      expect(headers[":status"]).toBe(204);
      expect(headers["access-control-allow-origin"]).toBe("*");
    } finally {
      session.close();
    }
  });

  it("without the variable: no CORS headers, an OPTIONS is the door's 404", async () => {
    server = await startApiServer();
    const res = await preflight(APP, "/v1/agents", "authorization");
    expect(res.status).toBe(404);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("refuses an origin with a path or another scheme, naming the variable", () => {
    for (const bad of [
      "https://app.example.com/",
      "https://app.example.com/x",
      "ftp://a.example",
    ]) {
      expect(() => loadConfig({ TETHER_CORS_ORIGINS: bad })).toThrow(/TETHER_CORS_ORIGINS/u);
    }
    expect(loadConfig({ TETHER_CORS_ORIGINS: `${APP}, *` }).corsOrigins).toEqual([APP, "*"]);
  });
});
