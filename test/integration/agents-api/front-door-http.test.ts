// The front door's HTTP contract (ADR 0037) seen raw: OpenAI's error body and statuses, JSON
// content type, an x-request-id on every answer, 404 for an unknown /v1 path, 400 for bad JSON —
// and Connect over HTTP/1.1 on the same port still answered by Connect.
import * as http2 from "node:http2";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { startDoorServer, type DoorServer } from "./door-server.js";

let h: DoorServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(env: Record<string, string> = {}) {
  h = await startDoorServer(env);
  return h;
}

async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(`${h!.baseUrl}${path}`, init);
  return { res, body: (await res.json()) as Record<string, unknown> };
}

const post = (body: string, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body,
});

describe("the front door over raw HTTP", () => {
  it("answers an unknown /v1 path with 404 in OpenAI's error body, JSON and a request id", async () => {
    await start();
    const { res, body } = await call("/v1/no/such/thing");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/u);
    expect(body).toEqual({
      error: {
        message: "no route for GET /v1/no/such/thing",
        type: "not_found_error",
        param: null,
        code: "route_not_found",
      },
    });
  });

  it("refuses malformed JSON and unknown fields with 400 naming the field", async () => {
    await start();
    const bad = await call("/v1/agents", post("{not json"));
    expect(bad.res.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { type: "invalid_request_error", param: "body" } });

    const unknown = await call("/v1/agents", post(JSON.stringify({ model: "m", colour: "red" })));
    expect(unknown.res.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: { param: "colour", code: "invalid_argument" } });

    const deep = await call("/v1/agents", post(`${"[".repeat(200)}${"]".repeat(200)}`));
    expect(deep.res.status).toBe(400);
    expect(deep.body).toMatchObject({ error: { param: "body" } });
  });

  it("gives every answer an x-request-id and JSON, successes and refusals alike", async () => {
    await start({ TETHER_API_KEYS: "key-a=tenantA" });
    const refused = await call("/v1/agents");
    expect(refused.res.status).toBe(401);
    expect(refused.body).toMatchObject({ error: { type: "authentication_error" } });
    expect(refused.res.headers.get("x-request-id")).toMatch(/^req_/u);

    const auth = { authorization: "Bearer key-a" };
    const made = await call("/v1/agents", post(JSON.stringify({ model: "m" }), auth));
    expect(made.res.status).toBe(200);
    expect(made.res.headers.get("content-type")).toBe("application/json");
    const id = made.body.id as string;
    const ids = [made.res.headers.get("x-request-id")];

    const missing = await call("/v1/agents/agent_missing", { headers: auth });
    expect(missing.res.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: "agent_not_found", param: null } });
    ids.push(missing.res.headers.get("x-request-id"));

    const gone = await call(`/v1/agents/${id}`, { method: "DELETE", headers: auth });
    expect(gone.body).toEqual({ id, object: "agent.deleted", deleted: true });
    ids.push(gone.res.headers.get("x-request-id"));
    expect(new Set(ids).size).toBe(3);

    const page = await call("/v1/agents?limit=500", { headers: auth });
    expect(page.res.status).toBe(400);
    expect(page.body).toMatchObject({ error: { param: "limit" } });
  });

  it("serves the same routes over h2c (HTTP/2 without TLS) on the same port", async () => {
    const harness = await start();
    const session = http2.connect(harness.baseUrl);
    try {
      const answer = await new Promise<{ status: number; type: string; body: string }>(
        (resolve, reject) => {
          const stream = session.request({ ":method": "GET", ":path": "/v1/agents?limit=1" });
          let status = 0;
          let type = "";
          let body = "";
          stream.on("response", (headers) => {
            status = Number(headers[":status"]);
            type = String(headers["content-type"]);
          });
          stream.on("data", (chunk: Buffer) => (body += chunk.toString()));
          stream.on("end", () => resolve({ status, type, body }));
          stream.on("error", reject);
          stream.end();
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.type).toBe("application/json");
      expect(JSON.parse(answer.body)).toEqual({
        object: "list",
        data: [],
        first_id: null,
        last_id: null,
        has_more: false,
      });
    } finally {
      session.close();
    }
  });

  it("leaves Connect over HTTP/1.1 on the same port to Connect", async () => {
    const harness = await start();
    const made = await call("/v1/agents", post(JSON.stringify({ model: "m", name: "both" })));
    const connect = createClient(
      AgentService,
      createConnectTransport({ baseUrl: harness.baseUrl, httpVersion: "1.1" }),
    );
    const { agent } = await connect.getAgent({ agentId: made.body.id as string });
    expect(agent?.displayName).toBe("both");
  });
});
