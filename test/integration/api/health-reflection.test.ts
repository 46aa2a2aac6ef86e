// grpc.health.v1 Check and Watch, and server reflection (v1 and v1alpha) over a real gRPC client
// stream against the real server.
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, createClient } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ServingStatus } from "../../../src/api/health-service.js";
import { Health } from "../../../src/gen/grpc/health/v1/health_pb.js";
import * as v1 from "../../../src/gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../../src/gen/grpc/reflection/v1alpha/reflection_pb.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { expectCode } from "../../support/api-clients.js";

let h: ApiServerHarness;
beforeEach(async () => {
  h = await startApiServer();
});
afterEach(() => h.close());

describe("health", () => {
  test("Check answers SERVING for the server and each service, NOT_FOUND for unknown ones", async () => {
    const health = createClient(Health, h.transport);
    expect((await health.check({})).status).toBe(ServingStatus.SERVING);
    expect((await health.check({ service: "tether.v1.SessionService" })).status).toBe(
      ServingStatus.SERVING,
    );
    await expectCode(health.check({ service: "no.such.Service" }), Code.NotFound);
    h.server.health.set("tether.v1.QueueService", ServingStatus.NOT_SERVING);
    expect((await health.check({ service: "tether.v1.QueueService" })).status).toBe(
      ServingStatus.NOT_SERVING,
    );
  });

  test("Watch streams the current status, then each change", async () => {
    const health = createClient(Health, h.transport);
    const abort = new AbortController();
    const seen: ServingStatus[] = [];
    const stream = health.watch({ service: "" }, { signal: abort.signal });
    const iterator = stream[Symbol.asyncIterator]();
    seen.push((await iterator.next()).value.status);
    h.server.health.set("", ServingStatus.NOT_SERVING);
    seen.push((await iterator.next()).value.status);
    h.server.health.set("", ServingStatus.SERVING);
    seen.push((await iterator.next()).value.status);
    abort.abort();
    expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING, ServingStatus.SERVING]);
  });

  test("Watch of an unknown service says SERVICE_UNKNOWN", async () => {
    const health = createClient(Health, h.transport);
    const abort = new AbortController();
    const stream = health.watch({ service: "x.Y" }, { signal: abort.signal });
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value.status).toBe(ServingStatus.SERVICE_UNKNOWN);
    abort.abort();
  });
});

async function* one<T>(message: T) {
  yield message;
}

describe("reflection", () => {
  test("v1 lists every service", async () => {
    const client = createClient(v1.ServerReflection, h.transport);
    const names: string[] = [];
    for await (const res of client.serverReflectionInfo(
      one({ messageRequest: { case: "listServices" as const, value: "" } }),
    )) {
      if (res.messageResponse.case === "listServicesResponse") {
        names.push(...res.messageResponse.value.service.map((s) => s.name));
      }
    }
    expect(names).toEqual(
      expect.arrayContaining([
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
        "tether.v1.LeaseService",
        "tether.v1.QueueService",
        "tether.v1.SessionService",
      ]),
    );
  });

  test("v1 file_containing_symbol returns the defining file first, then its imports", async () => {
    const client = createClient(v1.ServerReflection, h.transport);
    const files: string[] = [];
    for await (const res of client.serverReflectionInfo(
      one({
        messageRequest: {
          case: "fileContainingSymbol" as const,
          value: "tether.v1.SessionService.GetSession",
        },
      }),
    )) {
      if (res.messageResponse.case !== "fileDescriptorResponse") throw new Error("no descriptors");
      for (const bytes of res.messageResponse.value.fileDescriptorProto) {
        files.push(fromBinary(FileDescriptorProtoSchema, bytes).name);
      }
    }
    expect(files[0]).toBe("tether/v1/session_service.proto");
    expect([...files].sort()).toEqual([
      "tether/v1/context.proto",
      "tether/v1/lease.proto",
      "tether/v1/session.proto",
      "tether/v1/session_service.proto",
      "tether/v1/transcript.proto",
    ]);
  });

  test("v1 and v1alpha resolve the error detail messages, so clients can decode them", async () => {
    const files = async (symbol: string, alpha = false): Promise<string[]> => {
      const out: string[] = [];
      const request = one({
        messageRequest: { case: "fileContainingSymbol" as const, value: symbol },
      });
      const stream = alpha
        ? createClient(v1alpha.ServerReflection, h.transport).serverReflectionInfo(request)
        : createClient(v1.ServerReflection, h.transport).serverReflectionInfo(request);
      for await (const res of stream) {
        if (res.messageResponse.case !== "fileDescriptorResponse") {
          throw new Error(`${symbol}: ${JSON.stringify(res.messageResponse.value)}`);
        }
        for (const bytes of res.messageResponse.value.fileDescriptorProto) {
          out.push(fromBinary(FileDescriptorProtoSchema, bytes).name);
        }
      }
      return out;
    };
    // The file comes with what it imports (RetryInfo's google.protobuf.Duration).
    const withDeps = ["google/rpc/error_details.proto", "google/protobuf/duration.proto"];
    expect(await files("google.rpc.ErrorInfo")).toEqual(withDeps);
    expect(await files("google.rpc.BadRequest")).toEqual(withDeps);
    expect(await files("google.rpc.BadRequest.FieldViolation", true)).toEqual(withDeps);
    expect(await files("google.rpc.QuotaFailure")).toEqual(withDeps);
    expect(await files("google.rpc.RetryInfo", true)).toEqual(withDeps);
  });

  test("v1 answers NOT_FOUND for an unknown symbol and keeps the stream open", async () => {
    const client = createClient(v1.ServerReflection, h.transport);
    async function* two() {
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "no.Such" } };
      yield { messageRequest: { case: "fileByFilename" as const, value: "tether/v1/queue.proto" } };
    }
    const cases: string[] = [];
    for await (const res of client.serverReflectionInfo(two())) {
      cases.push(res.messageResponse.case ?? "none");
      if (res.messageResponse.case === "errorResponse") {
        expect(res.messageResponse.value.errorCode).toBe(Code.NotFound);
      }
    }
    expect(cases).toEqual(["errorResponse", "fileDescriptorResponse"]);
  });

  test("v1alpha answers the same questions", async () => {
    const client = createClient(v1alpha.ServerReflection, h.transport);
    const names: string[] = [];
    for await (const res of client.serverReflectionInfo(
      one({ messageRequest: { case: "listServices" as const, value: "*" } }),
    )) {
      if (res.messageResponse.case === "listServicesResponse") {
        names.push(...res.messageResponse.value.service.map((s) => s.name));
      }
    }
    expect(names).toContain("tether.v1.SessionService");
  });
});
