// A store call a running turn depends on that fails (Redis restarting under it) stops the turn
// short, uncommitted, instead of ending it as a failure and committing what it had: a checkpoint
// whose claim fails after a tool batch would otherwise commit the call and its result without
// the answer that follows them. The session is driven again and the turn commits whole, once.
import { describe, expect, it } from "vitest";
import { storeUnavailable } from "../../../src/domain/errors.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { collect, createRuntimeHarness, textCommand } from "../../support/runtime-harness.js";

/** The first claim at a turn's checkpoint fails as if Redis were restarting. */
function failingFirstCheckpoint(store: RuntimeStore): RuntimeStore {
  let failed = false;
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === "claimInputs") {
        return (...args: Parameters<RuntimeStore["claimInputs"]>) => {
          if (!failed && args[1].kind === "checkpoint") {
            failed = true;
            return Promise.reject(storeUnavailable("connection lost"));
          }
          return target.claimInputs(...args);
        };
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

describe("a turn that loses the store mid-way", () => {
  it("is not committed cut short; it runs again and commits whole", async () => {
    let runs = 0;
    const provider = createScriptedProvider({
      script: (request) => {
        if (request.messages.at(-1)?.role === "tool") {
          return { events: [{ type: "text_delta", text: "answer" }], response: {} };
        }
        runs++;
        return {
          response: {
            parts: [{ type: "tool_call", callId: "c1", toolName: "lookup", argumentsJson: "{}" }],
          },
        };
      },
    });
    const { runtime, store } = createRuntimeHarness({
      provider,
      leaseTtlMs: 300,
      serverTools: {
        definitions: () => [{ name: "lookup", description: "", inputSchema: { type: "object" } }],
        execute: () => Promise.resolve({ output: "42" }),
      },
      wrapStore: failingFirstCheckpoint,
    });
    const events = await collect(
      runtime.streamTurn(textCommand("short", "go"), new AbortController().signal),
    );
    const done = events.find((e) => e.event.type === "turn_completed");
    expect(done?.event).toMatchObject({ outcome: { kind: "finished", text: "answer" } });
    const snapshot = await store.loadSession("short" as never);
    expect(snapshot?.turnIndex).toBe(1);
    expect(snapshot?.messages.map((m) => (JSON.parse(m) as { role: string }).role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(runs).toBe(2);
  });
});
