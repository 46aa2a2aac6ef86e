// AgentService and sessions bound to agents, through the real services on the memory store: a
// session's turns run with its pinned version's definition under their own options, a pin moves
// only by UpdateSession, a deleted agent keeps pinned sessions working, and bad input is typed.
import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentService } from "../../../src/api/agent-service.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import type { ModelRequest } from "../../../src/ports/model-provider.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";

/** Answers every call with the model, system prompt and tools it was given. */
function reportingProvider(seen: ModelRequest[]) {
  return createScriptedProvider({
    script: (request) => {
      seen.push(request);
      const first = request.messages[0];
      const system = first?.role === "system" ? first.text : "-";
      const text = `${request.options.model ?? "-"}|${system}|${request.tools.map((t) => t.name).join(",")}`;
      return { events: [{ type: "text_delta", text }], response: {} };
    },
  });
}

let server: ApiServerHarness | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup() {
  const seen: ModelRequest[] = [];
  const { runtime, store } = createRuntimeHarness({ provider: reportingProvider(seen) });
  server = await startApiServer({
    routes: (router) => {
      router.service(TurnService, createTurnService({ runtime }));
      router.service(SessionService, createSessionService({ store }));
      router.service(AgentService, createAgentService(store));
    },
  });
  return {
    seen,
    agents: createClient(AgentService, server.transport),
    sessions: createClient(SessionService, server.transport),
    turns: createClient(TurnService, server.transport),
  };
}

const definition = (model: string, systemPrompt: string) => ({
  model,
  systemPrompt,
  clientTools: [{ name: "lookup", description: "asks the client", parametersJsonSchema: "" }],
});

async function answer(
  turns: ReturnType<typeof createClient<typeof TurnService>>,
  sessionId: string,
  extra: object = {},
): Promise<string> {
  let text = "";
  for await (const r of turns.streamTurn({
    sessionId,
    input: [{ kind: { case: "text", value: "hi" } }],
    ...extra,
  })) {
    const e = r.event?.event;
    if (e?.case === "turnCompleted" && e.value.outcome?.kind.case === "finished") {
      text = e.value.outcome.kind.value.value;
    }
  }
  return text;
}

describe("agents", () => {
  it("versions an agent: create, update with the version read, get any version, list, delete", async () => {
    const { agents } = await setup();
    const id = `a-${randomUUID()}`;
    const created = await agents.createAgent({
      agentId: id,
      displayName: "Helper",
      definition: definition("m1", "be brief"),
    });
    expect(created.agent).toMatchObject({ agentId: id, version: 1n, displayName: "Helper" });
    const updated = await agents.updateAgent({
      agentId: id,
      expectedVersion: 1n,
      displayName: "Helper",
      definition: definition("m2", "be kind"),
    });
    expect(updated.agent?.version).toBe(2n);
    await expectCode(
      agents.updateAgent({ agentId: id, expectedVersion: 1n, definition: definition("x", "y") }),
      Code.Aborted,
    );
    expect((await agents.getAgent({ agentId: id, version: 1n })).agent?.definition?.model).toBe(
      "m1",
    );
    expect((await agents.getAgent({ agentId: id })).agent?.definition?.systemPrompt).toBe(
      "be kind",
    );
    expect((await agents.listAgents({})).agents.map((a) => [a.agentId, a.version])).toEqual([
      [id, 2n],
    ]);
    expect((await agents.deleteAgent({ agentId: id })).deleted).toBe(true);
    await expectCode(agents.getAgent({ agentId: id }), Code.NotFound);
    expect((await agents.getAgent({ agentId: id, version: 2n })).agent?.version).toBe(2n);
    await expectCode(agents.createAgent({ agentId: id }), Code.AlreadyExists);
  });

  it("a session's turns run with its pinned version, under the turn's own options", async () => {
    const { agents, sessions, turns } = await setup();
    const agentId = `a-${randomUUID()}`;
    await agents.createAgent({ agentId, definition: definition("m1", "be brief") });
    const sessionId = `s-${randomUUID()}`;
    const made = await sessions.createSession({ sessionId, agentId });
    expect(made.session?.agent).toMatchObject({ agentId, version: 1n });
    expect(made.session?.metadata).toEqual({});
    expect(await answer(turns, sessionId)).toBe("m1|be brief|lookup");
    // A new version does not move the pin; the turn's own option overrides a field.
    await agents.updateAgent({
      agentId,
      expectedVersion: 1n,
      definition: definition("m2", "be kind"),
    });
    expect(await answer(turns, sessionId, { options: { model: "mine" } })).toBe(
      "mine|be brief|lookup",
    );
    // UpdateSession moves the pin, as a commit.
    const before = (await sessions.getSession({ sessionId })).session?.headRevision ?? 0n;
    const moved = await sessions.updateSession({ sessionId, agentId, agentVersion: 2n });
    expect(moved.session?.agent?.version).toBe(2n);
    expect(moved.session?.headRevision).toBe(before + 1n);
    expect(await answer(turns, sessionId)).toBe("m2|be kind|lookup");
    // A deleted agent keeps its pinned sessions working.
    await agents.deleteAgent({ agentId });
    expect(await answer(turns, sessionId)).toBe("m2|be kind|lookup");
  });

  it("StreamTurn binds a session it creates; a session bound elsewhere is refused", async () => {
    const { agents, sessions, turns } = await setup();
    const agentId = `a-${randomUUID()}`;
    await agents.createAgent({ agentId, definition: definition("m1", "first") });
    const sessionId = `s-${randomUUID()}`;
    expect(await answer(turns, sessionId, { agentId })).toBe("m1|first|lookup");
    expect((await sessions.getSession({ sessionId })).session?.agent?.agentId).toBe(agentId);
    expect(await answer(turns, sessionId, { agentId })).toBe("m1|first|lookup");
    const plain = `s-${randomUUID()}`;
    await sessions.createSession({ sessionId: plain });
    const refused = await expectCode(answer(turns, plain, { agentId }), Code.InvalidArgument);
    expect(refused.message).toContain("agent_id");
  });

  it("bad input is typed and names the field", async () => {
    const { agents, sessions } = await setup();
    const agentId = `a-${randomUUID()}`;
    await agents.createAgent({ agentId });
    await expectCode(
      sessions.createSession({ sessionId: `s-${randomUUID()}`, agentId: "no-such-agent" }),
      Code.NotFound,
    );
    await expectCode(
      sessions.createSession({ sessionId: `s-${randomUUID()}`, agentId, agentVersion: 9n }),
      Code.NotFound,
    );
    const reserved = await expectCode(
      sessions.createSession({
        sessionId: `s-${randomUUID()}`,
        metadata: { "tether.agent_id": "x" },
      }),
      Code.InvalidArgument,
    );
    expect(reserved.message).toContain("metadata.tether.agent_id");
    const badTool = await expectCode(
      agents.createAgent({
        agentId: `a-${randomUUID()}`,
        definition: { clientTools: [{ name: "bad name" }] },
      }),
      Code.InvalidArgument,
    );
    expect(badTool.message).toContain("definition.client_tools[0].name");
    await expectCode(agents.updateAgent({ agentId, expectedVersion: 0n }), Code.InvalidArgument);
    await expectCode(agents.getAgent({ agentId: "bad id" }), Code.InvalidArgument);
  });
});
