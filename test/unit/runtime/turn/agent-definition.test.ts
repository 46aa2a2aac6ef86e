// Binding a session to an agent, the one function CreateSession, UpdateSession and StreamTurn
// share: the pin resolves against the store to the version that exists, as a metadata patch.
import { describe, expect, test } from "vitest";
import type { AgentVersion } from "../../../../src/domain/agents.js";
import { TetherError } from "../../../../src/domain/errors.js";
import {
  agentBindingPatch,
  isBoundTo,
  readDefinition,
} from "../../../../src/runtime/turn/index.js";

const version = (n: number): AgentVersion => ({
  agentId: "t1:a",
  version: n,
  displayName: "A",
  definition: '{"model":"m1"}',
  createdAtMs: 0,
});

/** Agent t1:a with versions 1..3; nothing else. */
const store = {
  getAgent: (agentId: string, v?: number) =>
    Promise.resolve(
      agentId !== "t1:a"
        ? undefined
        : v === undefined
          ? version(3)
          : v <= 3
            ? version(v)
            : undefined,
    ),
};

describe("agent binding", () => {
  test("no version (or 0) pins the latest now; a version pins that one", async () => {
    const latest = { "tether.agent_id": "t1:a", "tether.agent_version": "3" };
    for (const v of [undefined, 0]) {
      expect(
        await agentBindingPatch(store, { agentId: "t1:a", clientAgentId: "a", version: v }),
      ).toEqual(latest);
    }
    expect(
      await agentBindingPatch(store, { agentId: "t1:a", clientAgentId: "a", version: 2 }),
    ).toEqual({ "tether.agent_id": "t1:a", "tether.agent_version": "2" });
  });

  test("no pin unbinds", async () => {
    expect(await agentBindingPatch(store, undefined)).toEqual({
      "tether.agent_id": "",
      "tether.agent_version": "",
    });
  });

  test("an unknown agent or version is agent_not_found naming the client's id", async () => {
    for (const pin of [
      { agentId: "t1:b", clientAgentId: "b", version: undefined },
      { agentId: "t1:a", clientAgentId: "a", version: 4 },
    ]) {
      const error = await agentBindingPatch(store, pin).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TetherError);
      expect((error as TetherError).code).toBe("agent_not_found");
      expect((error as TetherError).message).toContain(`agent ${pin.clientAgentId}`);
    }
  });

  test("isBoundTo reads the binding the patch wrote, any version", () => {
    expect(isBoundTo({ "tether.agent_id": "t1:a", "tether.agent_version": "2" }, "t1:a")).toBe(
      true,
    );
    expect(isBoundTo({ "tether.agent_id": "t1:a", "tether.agent_version": "2" }, "t1:b")).toBe(
      false,
    );
    expect(isBoundTo({}, "t1:a")).toBe(false);
  });

  test("a stored definition is a turn's settings and client tools", () => {
    expect(
      readDefinition(
        '{"model":"m1","tokenBudget":"70","clientTools":[{"name":"ping"}],"serverTools":["mail"]}',
      ),
    ).toEqual({
      settings: { model: "m1", maxTurnTokens: 70, serverTools: ["mail"] },
      clientTools: [{ name: "ping", description: "", inputSchema: { type: "object" } }],
    });
  });
});

describe("a definition as a turn's defaults", () => {
  test("leaves out the front door's labels and echoed fields (ADR 0037)", () => {
    const defaults = readDefinition(
      '{"model":"m1","systemPrompt":"s","metadata":{"a":"b"},"createdAtMs":5,"echo":{"x":1}}',
    );
    expect(defaults).toEqual({ settings: { model: "m1", systemPrompt: "s" }, clientTools: [] });
  });
});
