// Schema attacks (issue 40 items 1-3): tenant A sends schemas built to freeze the process (a
// catastrophic regex, a quadratic uniqueItems), to overflow its stack (100,000 levels), to fill its memory (100 KB), and
// to read or squat tenant B's `$id`s. Each is refused or bounded, and B's GetQuotaUsage keeps
// being answered meanwhile.
import { randomUUID } from "node:crypto";
import { Code, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createAgentService } from "../../src/api/agent-service.js";
import { createTurnService } from "../../src/api/turn-service.js";
import { AgentService } from "../../src/gen/tether/v1/agent_service_pb.js";
import { QuotaService } from "../../src/gen/tether/v1/quota_service_pb.js";
import { FailureReason, type TurnOutcome } from "../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { createScriptedProvider } from "../../src/providers/scripted.js";
import { createMemoryStore } from "../../src/store/memory/memory-store.js";
import { expectCode, violatedFields } from "../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../support/api-server.js";
import { createRuntimeHarness } from "../support/runtime-harness.js";
import { sleep } from "../support/wait-for.js";

/** A backtracking engine needs about 2^N steps for `^(a+)+$` against N a's and a "!". */
const N = 40;
/** B's calls must each be answered within this, while the attack would take hours. */
const B_BOUND_MS = 5_000;

let h: ApiServerHarness;
let a: ReturnType<typeof clientsFor>;
let b: ReturnType<typeof clientsFor>;

function clientsFor(transport: Transport) {
  return {
    turns: createClient(TurnService, transport),
    agents: createClient(AgentService, transport),
    quota: createClient(QuotaService, transport),
  };
}

const as = (key: string) =>
  createGrpcTransport({
    baseUrl: h.baseUrl,
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", `Bearer ${key}`);
        return next(req);
      },
    ],
  });

beforeAll(async () => {
  const store = createMemoryStore();
  // The echo model: the answer is the turn's input, so the attacker picks the checked text.
  const provider = createScriptedProvider({
    script: (request) => {
      const last = request.messages.at(-1);
      const text =
        last?.role === "user" && last.content[0]?.type === "text" ? last.content[0].text : "";
      return { events: [{ type: "text_delta", text }], response: {} };
    },
  });
  const { runtime } = createRuntimeHarness({ provider, wrapStore: () => store });
  h = await startApiServer({
    env: { TETHER_API_KEYS: "key-a=tenantA,key-b=tenantB" },
    store,
    routes: (router) => {
      router.service(TurnService, createTurnService({ runtime }));
      router.service(AgentService, createAgentService(store));
    },
  });
  a = clientsFor(as("key-a"));
  b = clientsFor(as("key-b"));
});

afterAll(async () => {
  await h.close();
});

async function outcomeOf(
  client: ReturnType<typeof clientsFor>,
  request: Parameters<ReturnType<typeof clientsFor>["turns"]["streamTurn"]>[0],
): Promise<TurnOutcome | undefined> {
  let outcome: TurnOutcome | undefined;
  for await (const r of client.turns.streamTurn(request)) {
    const e = r.event?.event;
    if (e?.case === "turnCompleted") outcome = e.value.outcome;
  }
  return outcome;
}

/** Runs `attack` while B asks for its quota usage in a loop; B's slowest answer, in ms. */
async function whileBPolls(attack: () => Promise<void>): Promise<number> {
  let done = false;
  let slowest = 0;
  let answers = 0;
  const poll = (async () => {
    while (!done) {
      const started = performance.now();
      await b.quota.getQuotaUsage({});
      slowest = Math.max(slowest, performance.now() - started);
      answers++;
      await sleep(20);
    }
  })();
  try {
    await attack();
  } finally {
    done = true;
    await poll;
  }
  expect(answers).toBeGreaterThan(0);
  return slowest;
}

const refusedField = async (call: Promise<unknown>) =>
  violatedFields(await expectCode(call, Code.InvalidArgument));

const turnWith = (
  text: string,
  options: object,
  clientTools: { name: string; parametersJsonSchema: string }[] = [],
) => ({
  sessionId: `s-${randomUUID()}`,
  input: [{ kind: { case: "text" as const, value: text } }],
  options,
  clientTools,
});

const drain = async (client: ReturnType<typeof clientsFor>, request: object) => {
  for await (const _ of client.turns.streamTurn(request)) {
    // drained
  }
};

describe("schema attacks from tenant A", () => {
  test(`a catastrophic pattern against ${N} a's and a "!" is refused; B stays answered`, async () => {
    const responseFormat = {
      name: "redos",
      jsonSchema: JSON.stringify({ type: "string", pattern: "^(a+)+$" }),
    };
    let outcome: TurnOutcome | undefined;
    const slowest = await whileBPolls(async () => {
      outcome = await outcomeOf(
        a,
        turnWith(JSON.stringify(`${"a".repeat(N)}!`), { responseFormat }),
      );
    });
    expect(outcome?.kind.case === "failed" && outcome.kind.value.reason).toBe(
      FailureReason.RESPONSE_FORMAT_MISMATCH,
    );
    expect(slowest).toBeLessThan(B_BOUND_MS);
  });

  test("uniqueItems over an answer of 30,000 objects is checked in linear time; B stays answered", async () => {
    // Pairwise comparison would be 450 million deep-equal calls: about a minute on the event loop.
    const responseFormat = {
      name: "unique",
      jsonSchema: JSON.stringify({ type: "array", uniqueItems: true }),
    };
    const answer = JSON.stringify(Array.from({ length: 30_000 }, (_, i) => ({ i })));
    let outcome: TurnOutcome | undefined;
    const slowest = await whileBPolls(async () => {
      outcome = await outcomeOf(a, turnWith(answer, { responseFormat }));
    });
    expect(outcome?.kind.case).toBe("finished");
    expect(slowest).toBeLessThan(B_BOUND_MS);
  });

  test("a 100 KB schema and a 100,000-level nested one are refused naming the field; B stays answered", async () => {
    const properties: Record<string, object> = {};
    for (let i = 0; JSON.stringify(properties).length < 100_000; i++) {
      properties[`field_${i}`] = { type: "string", description: "x".repeat(20) };
    }
    const big = JSON.stringify({ type: "object", properties });
    const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
    const fields: string[][] = [];
    const slowest = await whileBPolls(async () => {
      for (let round = 0; round < 5; round++) {
        fields.push(
          await refusedField(
            drain(a, turnWith("hi", { responseFormat: { name: "big", jsonSchema: big } })),
          ),
          await refusedField(
            drain(a, turnWith("hi", {}, [{ name: "deep", parametersJsonSchema: deep }])),
          ),
          await refusedField(
            a.agents.createAgent({
              agentId: `agent-${randomUUID()}`,
              definition: { clientTools: [{ name: "deep", parametersJsonSchema: deep }] },
            }),
          ),
        );
      }
    });
    expect(new Set(fields.flat())).toEqual(
      new Set([
        "options.response_format.json_schema",
        "client_tools[0].parameters_json_schema",
        "definition.client_tools[0].parameters_json_schema",
      ]),
    );
    expect(slowest).toBeLessThan(B_BOUND_MS);
  });

  test("B cannot read or squat A's $id, and A's turns with an $id finish", async () => {
    const id = `http://a.example/${randomUUID()}`;
    const aFormat = {
      name: "a",
      jsonSchema: JSON.stringify({
        $id: id,
        type: "object",
        properties: { secret_field_of_a: { type: "string" } },
        required: ["secret_field_of_a"],
      }),
    };
    const answer = '{"secret_field_of_a":"x"}';
    const first = await outcomeOf(a, turnWith(answer, { responseFormat: aFormat }));
    expect(first?.kind.case).toBe("finished");
    // B's reference to A's $id is an unknown reference, refused without A's fields.
    const refused = await expectCode(
      drain(
        b,
        turnWith("{}", {
          responseFormat: { name: "b", jsonSchema: JSON.stringify({ $ref: id }) },
        }),
      ),
      Code.InvalidArgument,
    );
    expect(refused.message).not.toMatch(/secret_field_of_a/u);
    // B's schema with A's $id takes nothing from A.
    const squat = await outcomeOf(
      b,
      turnWith('"b"', {
        responseFormat: { name: "b", jsonSchema: JSON.stringify({ $id: id, type: "string" }) },
      }),
    );
    expect(squat?.kind.case).toBe("finished");
    const again = await outcomeOf(a, turnWith(answer, { responseFormat: aFormat }));
    expect(again?.kind.case).toBe("finished");
  });
});
