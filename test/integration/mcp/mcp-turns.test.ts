// Turns that call MCP tools, through the real TurnService: the demo model's `/tool` command calls
// a server tool the turn selected, the stream shows where the tool ran and how long it took, a
// selected server that is down is named on turn_started, a client tool may not take a server
// tool's name, and a cancelled turn cancels its MCP call.
import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTurnService } from "../../../src/api/turn-service.js";
import { ToolOrigin_Kind, type TurnEvent } from "../../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { createMcpHub, type McpHub } from "../../../src/mcp/hub.js";
import { createToolDemoProvider } from "../../../src/providers/demo-tools.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { everythingStdio, quietMcpLogger, testServer } from "../../support/mcp-servers.js";
import { waitFor } from "../../support/wait-for.js";

let hub: McpHub;
let server: ApiServerHarness;
let turns: ReturnType<typeof createClient<typeof TurnService>>;

beforeAll(async () => {
  hub = createMcpHub({
    servers: [
      everythingStdio(),
      testServer(),
      {
        name: "broken",
        transport: {
          kind: "stdio",
          command: process.execPath,
          args: ["-e", "process.exit(1)"],
          env: {},
        },
        timeoutMs: undefined,
      },
    ],
    callTimeoutMs: 10_000,
    logger: quietMcpLogger,
    maxBackoffMs: 500,
  });
  const { runtime } = createRuntimeHarness({
    provider: createToolDemoProvider(),
    selectableTools: hub,
  });
  server = await startApiServer({
    routes: (router) => router.service(TurnService, createTurnService({ runtime })),
  });
  turns = createClient(TurnService, server.transport);
  await waitFor(() => hub.states().filter((s) => s.state === "connected").length === 2, {
    what: "everything and test connected",
  });
}, 30_000);

afterAll(async () => {
  await server?.close();
  await hub?.close();
});

async function run(
  text: string,
  serverTools: string[],
  signal?: AbortSignal,
): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const r of turns.streamTurn(
    {
      sessionId: `mcp-${randomUUID()}`,
      input: [{ kind: { case: "text", value: text } }],
      options: { serverTools },
    },
    signal ? { signal } : {},
  )) {
    if (r.event) events.push(r.event);
  }
  return events;
}

const answer = (events: TurnEvent[]) => {
  const done = events.find((e) => e.event.case === "turnCompleted");
  if (done?.event.case !== "turnCompleted") return "";
  const kind = done.event.value.outcome?.kind;
  return kind?.case === "finished" ? kind.value.value : "";
};

describe("turns with MCP tools", () => {
  it("the demo model calls a selected server tool; the stream shows its origin and duration", async () => {
    const events = await run('/tool everything__echo {"message":"hi"}', ["everything"]);
    expect(answer(events)).toBe("everything__echo returned Echo: hi");
    const started = events.find((e) => e.event.case === "toolCallStarted");
    expect(started?.event.value).toMatchObject({
      name: "everything__echo",
      origin: { kind: ToolOrigin_Kind.MCP, server: "everything" },
    });
    const finished = events.find((e) => e.event.case === "toolCallFinished");
    expect(finished?.event.value).toMatchObject({
      output: "Echo: hi",
      isError: false,
      origin: { kind: ToolOrigin_Kind.MCP, server: "everything" },
    });
    if (finished?.event.case !== "toolCallFinished") throw new Error("no finish");
    expect(finished.event.value.durationMs).toBeGreaterThanOrEqual(0n);
  });

  it("the tool carries the call's idempotency key session/turn/call", async () => {
    const events = await run("/tool test__meta {}", ["test__meta"]);
    const turnId = events[0]?.turnId ?? "";
    const key = /"tether\.dev\/idempotency-key":"([^"]+)"/u.exec(answer(events))?.[1] ?? "";
    expect(key.endsWith(`/${turnId}/call-1`)).toBe(true);
    expect(key.startsWith("mcp-")).toBe(true);
  });

  it("without a selection the tools are not offered; a selected server that is down is named", async () => {
    expect(answer(await run('/tool everything__echo {"message":"x"}', []))).toBe(
      "no tool named everything__echo is offered",
    );
    const events = await run("hello", ["everything", "broken"]);
    const started = events.find((e) => e.event.case === "turnStarted");
    expect(started?.event.value).toMatchObject({ unavailableServers: ["broken"] });
    expect(answer(events)).toBe("hello");
  });

  it("an error result reaches the model as an error; the turn goes on", async () => {
    const events = await run("/tool test__fail {}", ["test"]);
    const finished = events.find((e) => e.event.case === "toolCallFinished");
    expect(finished?.event.value).toMatchObject({ isError: true });
    expect(answer(events)).toBe("test__fail returned it went wrong on purpose");
  });

  it("a client tool named like a server tool is refused, naming the field", async () => {
    const refused = await expectCode(
      (async () => {
        for await (const _ of turns.streamTurn({
          sessionId: `mcp-${randomUUID()}`,
          input: [{ kind: { case: "text", value: "x" } }],
          clientTools: [{ name: "everything__echo", description: "", parametersJsonSchema: "" }],
        })) {
          // refused before any event
        }
      })(),
      Code.InvalidArgument,
    );
    expect(refused.message).toContain("client_tools[0].name");
  });

  it("cancelling the turn cancels its MCP call", async () => {
    const sessionId = `mcp-${randomUUID()}`;
    const stream = turns.streamTurn({
      sessionId,
      input: [{ kind: { case: "text", value: "/tool test__hang {}" } }],
      options: { serverTools: ["test"] },
    });
    const events: TurnEvent[] = [];
    for await (const r of stream) {
      if (!r.event) continue;
      events.push(r.event);
      if (r.event.event.case === "toolCallStarted") {
        await turns.cancelTurn({ sessionId, turnId: r.event.turnId });
      }
    }
    expect(events.at(-1)?.event.case).toBe("turnCompleted");
    const count = answer(await run("/tool test__cancellations {}", ["test"]));
    expect(Number(count.replace("test__cancellations returned ", ""))).toBeGreaterThanOrEqual(1);
  });
});
