// Agents as versioned data: versions increase by one, an update names the version it read (a
// compare-and-set), a delete stops serving the latest but keeps every version readable for the
// sessions pinned to one. Every law runs on memory, Redis, Redis Cluster and the wire.
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import type { AgentDraft } from "../../../src/domain/agents.js";
import { expectTetherError } from "../support/expectations.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

/** Definitions in their canonical JSON (the form the API stores), so every backend round-trips them. */
const definition = (model: string) => `{"model":"${model}","systemPrompt":"be brief"}`;
const freshAgentId = (prefix = "agent") => `${prefix}-${randomUUID()}`;
const draft = (agentId: string, model = "m1"): AgentDraft => ({
  agentId,
  displayName: `Agent ${model}`,
  definition: definition(model),
});

export function describeAgentLaws(factory: StoreFactory): void {
  describe("agents", () => {
    const harness = useStoreHarness(factory);

    test("an agent starts at version 1 and every update adds exactly one", async () => {
      const { store } = harness();
      const id = freshAgentId();
      const first = await store.createAgent(draft(id));
      expect(first).toMatchObject({ agentId: id, version: 1, definition: definition("m1") });
      const second = await store.updateAgent({ ...draft(id, "m2"), expectedVersion: 1 });
      const third = await store.updateAgent({ ...draft(id, "m3"), expectedVersion: 2 });
      expect([second.version, third.version]).toEqual([2, 3]);
      expect((await store.getAgent(id))?.definition).toBe(definition("m3"));
      // Old versions stay as they were.
      expect((await store.getAgent(id, 1))?.definition).toBe(definition("m1"));
      expect((await store.getAgent(id, 2))?.displayName).toBe("Agent m2");
      expect(await store.getAgent(id, 4)).toBeUndefined();
    });

    test("an update names the version it read: a stale one is refused and changes nothing", async () => {
      const { store } = harness();
      const id = freshAgentId();
      await store.createAgent(draft(id));
      await store.updateAgent({ ...draft(id, "m2"), expectedVersion: 1 });
      await expectTetherError(
        () => store.updateAgent({ ...draft(id, "stale"), expectedVersion: 1 }),
        "agent_version_conflict",
      );
      expect((await store.getAgent(id))?.version).toBe(2);
    });

    test("concurrent updates from the same version: exactly one wins", async () => {
      const { store } = harness();
      const id = freshAgentId();
      await store.createAgent(draft(id));
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          store.updateAgent({ ...draft(id, `m${i}`), expectedVersion: 1 }),
        ),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect((await store.getAgent(id))?.version).toBe(2);
    });

    test("a second create of one id is refused; an unknown agent is not found", async () => {
      const { store } = harness();
      const id = freshAgentId();
      await store.createAgent(draft(id));
      await expectTetherError(() => store.createAgent(draft(id, "again")), "agent_already_exists");
      expect(await store.getAgent(freshAgentId())).toBeUndefined();
      await expectTetherError(
        () => store.updateAgent({ ...draft(freshAgentId()), expectedVersion: 1 }),
        "agent_not_found",
      );
    });

    test("a delete keeps pinned versions readable; the id stays taken", async () => {
      const { store } = harness();
      const id = freshAgentId();
      await store.createAgent(draft(id));
      await store.updateAgent({ ...draft(id, "m2"), expectedVersion: 1 });
      expect(await store.deleteAgent(id)).toBe(true);
      expect(await store.deleteAgent(id)).toBe(false);
      expect(await store.getAgent(id)).toBeUndefined();
      expect((await store.getAgent(id, 1))?.definition).toBe(definition("m1"));
      expect((await store.getAgent(id, 2))?.definition).toBe(definition("m2"));
      await expectTetherError(
        () => store.updateAgent({ ...draft(id, "m3"), expectedVersion: 2 }),
        "agent_not_found",
      );
      await expectTetherError(() => store.createAgent(draft(id)), "agent_already_exists");
    });

    test("listing gives each live agent's latest version in id order, paged", async () => {
      const { store } = harness();
      const prefix = `list-${randomUUID()}`;
      const ids = ["c", "a", "d", "b"].map((s) => `${prefix}-${s}`);
      for (const id of ids) await store.createAgent(draft(id));
      await store.updateAgent({ ...draft(`${prefix}-a`, "m2"), expectedVersion: 1 });
      await store.deleteAgent(`${prefix}-d`);
      const first = await store.listAgents({ prefix, limit: 2 });
      expect(first.agents.map((a) => [a.agentId, a.version])).toEqual([
        [`${prefix}-a`, 2],
        [`${prefix}-b`, 1],
      ]);
      expect(first.nextCursor).toBe(`${prefix}-b`);
      const second = await store.listAgents({ prefix, limit: 2, cursor: first.nextCursor });
      expect(second.agents.map((a) => a.agentId)).toEqual([`${prefix}-c`]);
      expect(second.nextCursor).toBeUndefined();
    });
  });
}
