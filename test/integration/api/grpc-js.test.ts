// A second, independent toolchain: @grpc/grpc-js with @grpc/proto-loader reading proto/ directly,
// calling the real server. Catches anything that only works because client and server share
// protobuf-es code.
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";

const PROTO_ROOT = new URL("../../../proto/", import.meta.url).pathname;

function load(file: string): grpc.GrpcObject {
  const definition = protoLoader.loadSync(file, {
    includeDirs: [PROTO_ROOT],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition);
}

type Unary = (
  request: object,
  callback: (error: grpc.ServiceError | null, response: Record<string, unknown>) => void,
) => void;

function unary(client: grpc.Client, method: string, request: object) {
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    const fn = (client as unknown as Record<string, Unary>)[method];
    if (!fn) throw new Error(`no method ${method}`);
    fn.call(client, request, (error, response) => (error ? reject(error) : resolve(response)));
  });
}

describe("@grpc/grpc-js client", () => {
  let h: ApiServerHarness;
  const clients: grpc.Client[] = [];
  beforeAll(async () => {
    h = await startApiServer();
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await h.close();
  });

  function client(file: string, path: string[]): grpc.Client {
    let node: unknown = load(file);
    for (const part of path) node = (node as Record<string, unknown>)[part];
    const Ctor = node as grpc.ServiceClientConstructor;
    const c = new Ctor(`127.0.0.1:${h.server.port}`, grpc.credentials.createInsecure());
    clients.push(c);
    return c;
  }

  test("SessionService.CreateSession, and its INVALID_ARGUMENT for a bad id", async () => {
    const sessions = client("tether/v1/session_service.proto", ["tether", "v1", "SessionService"]);
    const created = await unary(sessions, "CreateSession", {
      session_id: "from-grpc-js",
      metadata: { lang: "js" },
    });
    const session = created.session as Record<string, unknown>;
    expect(session.session_id).toBe("from-grpc-js");
    expect(session.head_revision).toBe("1");
    expect(session.metadata).toEqual({ lang: "js" });

    const error = await unary(sessions, "CreateSession", { session_id: "bad id" }).catch(
      (e: grpc.ServiceError) => e,
    );
    expect((error as grpc.ServiceError).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  test("grpc.health.v1.Health/Check", async () => {
    const health = client("grpc/health/v1/health.proto", ["grpc", "health", "v1", "Health"]);
    expect(await unary(health, "Check", { service: "" })).toEqual({ status: "SERVING" });
    const missing = await unary(health, "Check", { service: "nope" }).catch(
      (e: grpc.ServiceError) => e,
    );
    expect((missing as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
  });
});
