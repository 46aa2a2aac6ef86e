// One rule for unknown sessions (ADR 0003): the RPCs that deliver input create the session with
// their first acknowledged input; every other RPC that names a session answers NOT_FOUND when it
// does not exist for the caller's tenant, at once. Run through the real server, with TurnService
// on the same store as the other services, and from @grpc/grpc-js.
import { Code, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterEach, describe, expect, test } from "vitest";
import { createTurnService } from "../../../src/api/turn-service.js";
import { DeliveryPolicy, SlotPolicy, WorkClass } from "../../../src/gen/tether/v1/queue_pb.js";
import { QueueService } from "../../../src/gen/tether/v1/queue_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import type { TurnEvent } from "../../../src/gen/tether/v1/turn_pb.js";
import { createEchoProvider } from "../../../src/providers/scripted.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";

let h: ApiServerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The real server with TurnService driven by a runtime on the server's own store. */
async function start(env: Record<string, string> = {}): Promise<ApiServerHarness> {
  const store = createMemoryStore();
  const { runtime } = createRuntimeHarness({
    provider: createEchoProvider(),
    wrapStore: () => store,
  });
  h = await startApiServer({
    env,
    store,
    routes: (router) => router.service(TurnService, createTurnService({ runtime })),
  });
  return h;
}

function clients(transport: Transport) {
  return {
    sessions: createClient(SessionService, transport),
    queue: createClient(QueueService, transport),
    turns: createClient(TurnService, transport),
  };
}

const textInput = (text: string) => [{ kind: { case: "text" as const, value: text } }];
const draft = (sessionId: string, payload: string, sourceKey = "") => ({
  sessionId,
  workClass: WorkClass.TURN_WORK,
  deliveryPolicy: DeliveryPolicy.EARLIEST_SAFE_BOUNDARY,
  slotPolicy: SlotPolicy.EXCLUSIVE,
  payload,
  sourceKey,
});

async function collect(stream: AsyncIterable<{ event?: TurnEvent }>): Promise<TurnEvent[]> {
  const out: TurnEvent[] = [];
  for await (const r of stream) if (r.event) out.push(r.event);
  return out;
}

/** Every RPC that names a session without delivering input to it, called for `sessionId`. */
function namingCalls(c: ReturnType<typeof clients>, sessionId: string) {
  return {
    GetSession: () => c.sessions.getSession({ sessionId }),
    UpdateSessionMetadata: () =>
      c.sessions.updateSessionMetadata({ sessionId, metadata: { k: "v" } }),
    DeleteSession: () => c.sessions.deleteSession({ sessionId }),
    // A deadline far beyond "at once": before the rule, the watch waited for it to pass.
    WatchSession: () => collect(c.turns.watchSession({ sessionId }, { timeoutMs: 20_000 })),
    CancelTurn: () => c.turns.cancelTurn({ sessionId }),
    SubmitToolResults: () =>
      c.turns.submitToolResults({
        sessionId,
        turnId: "turn-1",
        results: [{ callId: "call-1", output: "x" }],
      }),
    ListWork: () => c.queue.listWork({ sessionId }),
    CancelWork: () => c.queue.cancelWork({ sessionId, batchIds: ["b-1"] }),
    ListInputs: () => c.queue.listInputs({ sessionId }),
    CancelInputs: () =>
      c.queue.cancelInputs({
        sessionId,
        selector: { case: "inputIds", value: { ids: ["i-1"] } },
      }),
  };
}

describe("unknown sessions", () => {
  test("every RPC that names a session without delivering input answers NOT_FOUND, at once", async () => {
    const c = clients((await start()).transport);
    for (const [name, call] of Object.entries(namingCalls(c, "never-made"))) {
      const started = Date.now();
      const error = await expectCode(call(), Code.NotFound);
      expect(error.message, name).toContain("never-made");
      // Generous: the point is that nothing waits for the 20 s deadline.
      expect(Date.now() - started, name).toBeLessThan(5_000);
    }
    // None of them created it.
    await expectCode(c.sessions.getSession({ sessionId: "never-made" }), Code.NotFound);
  });

  test("another tenant's session is NOT_FOUND for every one of them", async () => {
    const server = await start({ TETHER_API_KEYS: "key-a=tenantA,key-b=tenantB" });
    const withKey = (key: string) =>
      createGrpcTransport({
        baseUrl: server.baseUrl,
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${key}`);
            return next(req);
          },
        ],
      });
    const a = clients(withKey("key-a"));
    await collect(a.turns.streamTurn({ sessionId: "a-only", input: textInput("mine") }));
    await a.queue.enqueueWork({ draft: draft("a-only", "wake") });
    const b = clients(withKey("key-b"));
    for (const [name, call] of Object.entries(namingCalls(b, "a-only"))) {
      const error = await expectCode(call(), Code.NotFound);
      expect(error.message, name).not.toContain("tenantA");
    }
    // Tenant A's session is untouched by B's calls (B's DeleteSession deleted nothing).
    expect((await a.sessions.getSession({ sessionId: "a-only" })).session?.turnIndex).toBe(1n);
  });

  test("StreamTurn, SubmitInput and EnqueueWork create the session with their first input", async () => {
    const c = clients((await start()).transport);
    await c.queue.submitInput({
      sessionId: "by-input",
      delivery: { kind: { case: "nextTurn", value: {} } },
      payload: "p",
    });
    await c.queue.enqueueWork({ draft: draft("by-work", "w", "src-1") });
    await c.queue.enqueueWork({ draft: draft("by-work", "w", "src-1") });
    for (const id of ["by-input", "by-work"]) {
      const { session } = await c.sessions.getSession({ sessionId: id });
      // Exactly what CreateSession leaves: revision 1 (the creation), no turn yet.
      expect(session).toMatchObject({
        sessionId: id,
        headRevision: 1n,
        turnIndex: 0n,
        metadata: {},
      });
      // An explicit create now is honest about it.
      await expectCode(c.sessions.createSession({ sessionId: id }), Code.AlreadyExists);
    }
    expect((await c.queue.listWork({ sessionId: "by-work" })).batches).toHaveLength(1);

    const events = await collect(
      c.turns.streamTurn({ sessionId: "by-turn", input: textInput("hello") }),
    );
    const done = events.at(-1)?.event;
    expect(done?.case).toBe("turnCompleted");
    // The input created the session at revision 1; its turn committed revision 2.
    if (done?.case === "turnCompleted") expect(done.value.headRevision).toBe(2n);
    const listed = await c.sessions.listSessions({});
    expect(listed.sessions.map((s) => s.sessionId)).toEqual(["by-input", "by-turn", "by-work"]);
    // Now that it exists, the naming RPCs answer normally.
    expect((await c.turns.cancelTurn({ sessionId: "by-turn" })).cancelled).toBe(false);
    expect((await c.queue.listInputs({ sessionId: "by-turn" })).inputs).toEqual([]);
  });

  test("head_revision counts commits and turn_index counts turns, as the proto documents", async () => {
    const c = clients((await start()).transport);
    const created = await c.sessions.createSession({ sessionId: "counted" });
    expect(created.session).toMatchObject({ headRevision: 1n, turnIndex: 0n });
    const events = await collect(
      c.turns.streamTurn({ sessionId: "counted", input: textInput("one") }),
    );
    expect(events[0]?.event).toMatchObject({ case: "turnStarted", value: { turnIndex: 1n } });
    const after = await c.sessions.getSession({ sessionId: "counted" });
    expect(after.session).toMatchObject({ headRevision: 2n, turnIndex: 1n });
    const updated = await c.sessions.updateSessionMetadata({
      sessionId: "counted",
      metadata: { k: "v" },
    });
    expect(updated.session).toMatchObject({ headRevision: 3n, turnIndex: 1n });
  });

  test("from @grpc/grpc-js, WatchSession of an unknown session is NOT_FOUND at once", async () => {
    const server = await start();
    const definition = protoLoader.loadSync("tether/v1/turn_service.proto", {
      includeDirs: [new URL("../../../proto/", import.meta.url).pathname],
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      tether: { v1: { TurnService: grpc.ServiceClientConstructor } };
    };
    const client = new pkg.tether.v1.TurnService(
      `127.0.0.1:${server.server.port}`,
      grpc.credentials.createInsecure(),
    );
    try {
      const watch = (
        client as unknown as {
          WatchSession(req: object, options: grpc.CallOptions): grpc.ClientReadableStream<unknown>;
        }
      ).WatchSession({ session_id: "never-made" }, { deadline: Date.now() + 20_000 });
      const started = Date.now();
      const error = await new Promise<grpc.ServiceError>((resolve, reject) => {
        watch.on("data", () => reject(new Error("an unknown session streamed an event")));
        watch.on("error", resolve);
        watch.on("end", () => reject(new Error("the watch ended without a status")));
      });
      expect(error.code).toBe(grpc.status.NOT_FOUND);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      client.close();
    }
  });
});
