// A turn's response format: the schema reaches the provider, the final answer is checked against
// it (a mismatch ends the turn failed with its own reason, the answer kept), a bad schema is
// refused naming its field, and an agent's format applies to its sessions' turns. A schema is
// user input (issue 40): its patterns run in linear time, its `$id` is its own, and its size,
// depth and member count are bounded at submission.
import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { afterEach, expect, it } from "vitest";
import { createAgentService } from "../../../src/api/agent-service.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { FailureReason, type TurnOutcome } from "../../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import type { ModelCallOptions, ModelProvider } from "../../../src/ports/model-provider.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { expectCode, violatedFields } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";

let server: ApiServerHarness | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ANSWERS: Record<string, string> = {
  good: '{"city":"Paris"}',
  wrong: '{"city":3}',
  prose: "It is Paris.",
};
const schema = JSON.stringify({
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
});

async function setup() {
  const seen: ModelCallOptions[] = [];
  const scripted = createScriptedProvider({
    script: (request) => {
      const last = request.messages.at(-1);
      const text =
        last?.role === "user" && last.content[0]?.type === "text" ? last.content[0].text : "";
      // "echo:<text>" answers <text>: the client picks the answer to check.
      const answer = text.startsWith("echo:") ? text.slice(5) : (ANSWERS[text] ?? "");
      return { events: [{ type: "text_delta", text: answer }], response: {} };
    },
  });
  const provider: ModelProvider = {
    ...scripted,
    call: (request) => {
      seen.push(request.options);
      return scripted.call(request);
    },
  };
  const { runtime, store } = createRuntimeHarness({ provider });
  server = await startApiServer({
    routes: (router) => {
      router.service(TurnService, createTurnService({ runtime }));
      router.service(SessionService, createSessionService({ store }));
      router.service(AgentService, createAgentService(store));
    },
  });
  const turns = createClient(TurnService, server.transport);
  async function outcomeOf(request: Parameters<typeof turns.streamTurn>[0]) {
    let outcome: TurnOutcome | undefined;
    for await (const r of turns.streamTurn(request)) {
      const e = r.event?.event;
      if (e?.case === "turnCompleted") outcome = e.value.outcome;
    }
    return outcome;
  }
  return {
    seen,
    turns,
    outcomeOf,
    sessions: createClient(SessionService, server.transport),
    agents: createClient(AgentService, server.transport),
  };
}

const ask = (sessionId: string, text: string, withFormat = true) => ({
  sessionId,
  input: [{ kind: { case: "text" as const, value: text } }],
  ...(withFormat && { options: { responseFormat: { name: "place", jsonSchema: schema } } }),
});

it("an answer matching the schema finishes the turn; the schema reached the provider", async () => {
  const { seen, outcomeOf } = await setup();
  const outcome = await outcomeOf(ask(`s-${randomUUID()}`, "good"));
  expect(outcome?.kind).toMatchObject({ case: "finished", value: { value: '{"city":"Paris"}' } });
  expect(seen[0]?.responseFormat).toEqual({ name: "place", schema: JSON.parse(schema) });
});

it("an answer that does not match ends the turn failed, naming where; the answer is kept", async () => {
  const { outcomeOf, sessions } = await setup();
  const sessionId = `s-${randomUUID()}`;
  const wrong = await outcomeOf(ask(sessionId, "wrong"));
  expect(wrong?.kind.case).toBe("failed");
  if (wrong?.kind.case !== "failed") return;
  expect(wrong.kind.value.reason).toBe(FailureReason.RESPONSE_FORMAT_MISMATCH);
  expect(wrong.kind.value.message).toMatch(/\/city must be string/u);
  const prose = await outcomeOf(ask(sessionId, "prose"));
  expect(prose?.kind.case === "failed" && prose.kind.value.message).toMatch(/not JSON/u);
  const got = await sessions.getSession({ sessionId, includeMessages: true });
  expect(got.transcript.at(-1)?.parts[0]?.kind).toEqual({ case: "text", value: "It is Paris." });
  // Without a format, the same answer finishes.
  const free = await outcomeOf(ask(sessionId, "prose", false));
  expect(free?.kind.case).toBe("finished");
});

it("a bad format is refused naming its field", async () => {
  const { turns } = await setup();
  const cases: [object, string][] = [
    [{ name: "place", jsonSchema: "{not json" }, "options.response_format.json_schema"],
    [{ name: "place", jsonSchema: "[1]" }, "options.response_format.json_schema"],
    [{ name: "place", jsonSchema: '{"type":"nonsense"}' }, "options.response_format.json_schema"],
    [{ name: "a place", jsonSchema: schema }, "options.response_format.name"],
  ];
  for (const [responseFormat, field] of cases) {
    const error = await expectCode(
      (async () => {
        for await (const _ of turns.streamTurn({
          sessionId: `s-${randomUUID()}`,
          input: [{ kind: { case: "text", value: "good" } }],
          options: { responseFormat },
        })) {
          // drained
        }
      })(),
      Code.InvalidArgument,
    );
    expect(violatedFields(error)).toContain(field);
  }
});

it("an agent's response format applies to its sessions' turns", async () => {
  const { agents, sessions, outcomeOf } = await setup();
  const agentId = `a-${randomUUID()}`;
  await agents.createAgent({
    agentId,
    definition: { responseFormat: { name: "place", jsonSchema: schema } },
  });
  const sessionId = `s-${randomUUID()}`;
  await sessions.createSession({ sessionId, agentId });
  const outcome = await outcomeOf(ask(sessionId, "wrong", false));
  expect(outcome?.kind.case === "failed" && outcome.kind.value.reason).toBe(
    FailureReason.RESPONSE_FORMAT_MISMATCH,
  );
  await expectCode(
    agents.createAgent({
      agentId: `b-${randomUUID()}`,
      definition: { responseFormat: { jsonSchema: "{" } },
    }),
    Code.InvalidArgument,
  );
});

const drain = async (stream: AsyncIterable<unknown>) => {
  for await (const _ of stream) {
    // drained
  }
};
const withFormat = (text: string, jsonSchema: string) => ({
  sessionId: `s-${randomUUID()}`,
  input: [{ kind: { case: "text" as const, value: text } }],
  options: { responseFormat: { name: "checked", jsonSchema } },
});

it("a catastrophic pattern checks an answer of 40 a's and a '!' in linear time", async () => {
  const { outcomeOf } = await setup();
  const jsonSchema = JSON.stringify({ type: "string", pattern: "^(a+)+$" });
  const refused = await outcomeOf(
    withFormat(`echo:${JSON.stringify(`${"a".repeat(40)}!`)}`, jsonSchema),
  );
  expect(refused?.kind.case === "failed" && refused.kind.value).toMatchObject({
    reason: FailureReason.RESPONSE_FORMAT_MISMATCH,
    message: expect.stringMatching(/must match pattern/u) as unknown,
  });
  const matched = await outcomeOf(withFormat(`echo:${JSON.stringify("a".repeat(40))}`, jsonSchema));
  expect(matched?.kind.case).toBe("finished");
});

it("a pattern only a backtracking engine runs is refused naming the field", async () => {
  const { turns } = await setup();
  const error = await expectCode(
    drain(
      turns.streamTurn(withFormat("good", JSON.stringify({ type: "string", pattern: "(a)\\1" }))),
    ),
    Code.InvalidArgument,
  );
  expect(violatedFields(error)).toEqual(["options.response_format.json_schema"]);
  expect(error.rawMessage).toMatch(/pattern .* is not supported/u);
});

it("a schema with an $id checks turn after turn; another format cannot $ref it", async () => {
  const { turns, outcomeOf } = await setup();
  const id = `http://tenant.example/${randomUUID()}`;
  const jsonSchema = JSON.stringify({
    $id: id,
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  });
  for (let i = 0; i < 2; i++) {
    const outcome = await outcomeOf(withFormat('echo:{"city":"Paris"}', jsonSchema));
    expect(outcome?.kind.case).toBe("finished");
  }
  const error = await expectCode(
    drain(turns.streamTurn(withFormat("good", JSON.stringify({ $ref: id })))),
    Code.InvalidArgument,
  );
  expect(error.rawMessage).toMatch(/can't resolve reference/u);
});

it("a schema past the size, depth or member bound is refused naming its field, also a client tool's", async () => {
  const { turns, agents } = await setup();
  const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
  const deep65 = `${'{"a":'.repeat(64)}{}${"}".repeat(64)}`;
  const big = JSON.stringify({ description: "x".repeat(70_000) });
  const many = JSON.stringify({
    properties: Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`p${i}`, {}])),
  });
  const toolTurn = (parametersJsonSchema: string) => ({
    sessionId: `s-${randomUUID()}`,
    input: [{ kind: { case: "text" as const, value: "good" } }],
    clientTools: [{ name: "lookup", description: "", parametersJsonSchema }],
  });
  for (const text of [deep, deep65, big, many]) {
    const asFormat = await expectCode(
      drain(turns.streamTurn(withFormat("good", text))),
      Code.InvalidArgument,
    );
    expect(violatedFields(asFormat)).toEqual(["options.response_format.json_schema"]);
    // A tool's schema is not compiled here: its member count is the model's business.
    if (text === many) continue;
    const asTool = await expectCode(drain(turns.streamTurn(toolTurn(text))), Code.InvalidArgument);
    expect(violatedFields(asTool)).toEqual(["client_tools[0].parameters_json_schema"]);
  }
  const asAgentTool = await expectCode(
    agents.createAgent({
      agentId: `a-${randomUUID()}`,
      definition: { clientTools: [{ name: "lookup", parametersJsonSchema: deep }] },
    }),
    Code.InvalidArgument,
  );
  expect(violatedFields(asAgentTool)).toEqual([
    "definition.client_tools[0].parameters_json_schema",
  ]);
});
