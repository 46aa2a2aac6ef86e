// The real server for the front door's session tests: a runtime on a memory store whose model
// answers "plain answer", or asks for the client tool `lookup` when the user writes "use lookup"
// (needing approval where the harness says so), and never answers "hang"; the door and the gRPC
// services share it.
import { createClient } from "@connectrpc/connect";
import OpenAI from "openai-agents-sdk";
import { createAgentService } from "../../../src/api/agent-service.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import type { MemoryStore } from "../../../src/store/memory/memory-store.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness, type RuntimeHarness } from "../../support/runtime-harness.js";

function toolAskingProvider(): ModelProvider {
  return createScriptedProvider({
    script: (request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") {
        return { events: [{ type: "text_delta", text: "done" }], response: {} };
      }
      const said =
        last?.role === "user" ? last.content.map((c) => (c.type === "text" ? c.text : "")) : [];
      if (said.join(" ").includes("hang")) return { hang: true };
      if (!said.join(" ").includes("lookup")) {
        return { events: [{ type: "text_delta", text: "plain answer" }], response: {} };
      }
      return {
        response: {
          parts: [
            { type: "tool_call", callId: "call-1", toolName: "lookup", argumentsJson: '{"q":"x"}' },
          ],
        },
      };
    },
  });
}

export interface SessionDoor {
  server: ApiServerHarness;
  rt: RuntimeHarness;
  sdk: OpenAI;
  sessions: ReturnType<typeof createClient<typeof SessionService>>;
  turns: ReturnType<typeof createClient<typeof TurnService>>;
  close(): Promise<void>;
}

export async function startSessionDoor(
  options: { approvalRequiredTools?: string[]; env?: Record<string, string> } = {},
): Promise<SessionDoor> {
  const rt = createRuntimeHarness({
    provider: toolAskingProvider(),
    parkAfterMs: 0,
    ...(options.approvalRequiredTools && { approvalRequiredTools: options.approvalRequiredTools }),
  });
  const store = rt.store;
  const server = await startApiServer({
    store: store as MemoryStore,
    runtime: rt.runtime,
    ...(options.env && { env: options.env }),
    routes: (router) => {
      router.service(TurnService, createTurnService({ runtime: rt.runtime }));
      router.service(SessionService, createSessionService({ store }));
      router.service(AgentService, createAgentService(store));
    },
  });
  return {
    server,
    rt,
    sdk: new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "any-key", maxRetries: 0 }),
    sessions: createClient(SessionService, server.transport),
    turns: createClient(TurnService, server.transport),
    close: async () => {
      await server.close();
      await rt.runtime.drain(1_000);
    },
  };
}
