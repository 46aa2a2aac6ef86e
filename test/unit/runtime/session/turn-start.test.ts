// A StreamTurn on an idle session starts in one store step (startTurn, ADR 0023): the driver runs
// the turn under the lease that step took, with no separate claim, first input claim or
// transcript load; the next turn, sent after the client saw turn_completed, starts the same way
// (the finished loop stepped aside). A store without startTurn (the wire) gets the separate calls.
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import type { RuntimeStore } from "../../../../src/ports/runtime-store.js";
import { createEchoProvider } from "../../../../src/providers/scripted.js";
import { createRuntimeHarness, textCommand } from "../../../support/runtime-harness.js";

/** Counts the store calls by operation name. */
function counting(calls: Map<string, number>, hideStartTurn = false) {
  return (store: RuntimeStore): RuntimeStore =>
    new Proxy(store, {
      get(target, property, receiver) {
        if (hideStartTurn && property === "startTurn") return undefined;
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== "function" || typeof property !== "string") return value;
        return (...args: unknown[]) => {
          calls.set(property, (calls.get(property) ?? 0) + 1);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
}

async function turnEvents(
  harness: ReturnType<typeof createRuntimeHarness>,
  sessionId: SessionId,
  text: string,
): Promise<string[]> {
  const types: string[] = [];
  for await (const item of harness.runtime.streamTurn(
    textCommand(sessionId, text),
    new AbortController().signal,
  )) {
    types.push(item.event.type);
  }
  return types;
}

describe("a turn start on an idle session", () => {
  it("runs each of two turns under the lease its own start took", async () => {
    const calls = new Map<string, number>();
    const harness = createRuntimeHarness({
      provider: createEchoProvider(),
      wrapStore: counting(calls),
    });
    const sessionId = "start-1" as SessionId;
    expect((await turnEvents(harness, sessionId, "one")).at(-1)).toBe("turn_completed");
    expect((await turnEvents(harness, sessionId, "two")).at(-1)).toBe("turn_completed");
    expect(calls.get("startTurn")).toBe(2);
    expect(calls.get("tryClaimLease") ?? 0).toBe(0);
    expect(calls.get("loadSession") ?? 0).toBe(0);
    expect(calls.get("submitInput") ?? 0).toBe(0);
    // Only the checkpoints' claims: the starts took the idle ones.
    const claimed = (await harness.store.listInputs(sessionId)).length;
    expect(claimed).toBe(0);
    expect(await harness.store.currentLease(sessionId)).toBeUndefined();
  });

  it("without startTurn on the store, submits and claims separately", async () => {
    const calls = new Map<string, number>();
    const harness = createRuntimeHarness({
      provider: createEchoProvider(),
      wrapStore: counting(calls, true),
    });
    const sessionId = "start-2" as SessionId;
    expect((await turnEvents(harness, sessionId, "one")).at(-1)).toBe("turn_completed");
    expect(calls.get("startTurn") ?? 0).toBe(0);
    expect(calls.get("submitInput")).toBe(1);
    expect(calls.get("tryClaimLease")).toBe(1);
  });
});
