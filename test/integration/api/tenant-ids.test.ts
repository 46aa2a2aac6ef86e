// Tenant prefixes never reach the wire (ADR 0003): with API keys mapping to tenants, the ids a
// client sees in a turn's events, tool idempotency keys included, are the ids it sent.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, test } from "vitest";
import { createTurnService } from "../../../src/api/turn-service.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";

let h: ApiServerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Asks for the client tool once, then answers with what the tool said. */
function toolThenAnswer() {
  return createScriptedProvider({
    script: (request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { response: { fullText: "done" } };
      return {
        response: {
          parts: [{ type: "tool_call", callId: "call-1", toolName: "lookup", argumentsJson: "{}" }],
        },
      };
    },
  });
}

describe("ids on the wire under tenancy", () => {
  test("tool idempotency keys are session/turn/call with the client's session id", async () => {
    const store = createMemoryStore();
    const { runtime } = createRuntimeHarness({
      provider: toolThenAnswer(),
      wrapStore: () => store,
    });
    h = await startApiServer({
      env: { TETHER_API_KEYS: "key-a=tenantA" },
      store,
      routes: (router) => router.service(TurnService, createTurnService({ runtime })),
    });
    const transport = createGrpcTransport({
      baseUrl: h.baseUrl,
      interceptors: [
        (next) => (req) => {
          req.header.set("authorization", "Bearer key-a");
          return next(req);
        },
      ],
    });
    const turns = createClient(TurnService, transport);
    const keys: string[] = [];
    const sessions: string[] = [];
    let turnId = "";
    for await (const r of turns.streamTurn({
      sessionId: "chat-7",
      input: [{ kind: { case: "text", value: "look it up" } }],
      clientTools: [{ name: "lookup", description: "", parametersJsonSchema: '{"type":"object"}' }],
    })) {
      const e = r.event;
      if (!e) continue;
      sessions.push(e.sessionId);
      if (e.event.case === "toolCallRequested") {
        turnId = e.turnId;
        keys.push(e.event.value.idempotencyKey);
        await turns.submitToolResults({
          sessionId: "chat-7",
          turnId: e.turnId,
          results: [{ callId: "call-1", output: "42" }],
        });
      }
    }
    expect(turnId).not.toBe("");
    expect(keys).toEqual([`chat-7/${turnId}/call-1`]);
    expect(new Set(sessions)).toEqual(new Set(["chat-7"]));
  });
});
