// StreamTurn hears its turn on this replica's live bus from the turn's first event: nothing of
// the turn is published before the call's watch has subscribed (an unheard delta would leave the
// client waiting for the shared log's coalesced copy), and the subscription ends with the call.
import { describe, expect, it } from "vitest";
import { createEchoProvider } from "../../../src/providers/scripted.js";
import { createTetherRuntime } from "../../../src/runtime/runtime.js";
import { createSessionBus, type SessionBus } from "../../../src/runtime/stream/session-bus.js";
import {
  collect,
  createRuntimeHarness,
  textCommand,
  textOf,
} from "../../support/runtime-harness.js";

function countingBus(): SessionBus & { unheard: string[]; heard: number } {
  const inner = createSessionBus();
  const listeners = new Map<string, number>();
  const bus = {
    unheard: [] as string[],
    heard: 0,
    publish(event: Parameters<SessionBus["publish"]>[0]) {
      if ((listeners.get(event.sessionId) ?? 0) === 0) bus.unheard.push(event.event.type);
      else bus.heard++;
      inner.publish(event);
    },
    subscribe(sessionId: string, listener: Parameters<SessionBus["subscribe"]>[1]) {
      listeners.set(sessionId, (listeners.get(sessionId) ?? 0) + 1);
      const off = inner.subscribe(sessionId, listener);
      return () => {
        listeners.set(sessionId, (listeners.get(sessionId) ?? 1) - 1);
        off();
      };
    },
  };
  return bus;
}

describe("StreamTurn and the live bus", () => {
  it("hears every event of its turn live, from turn_started on", async () => {
    const { deps } = createRuntimeHarness({ provider: createEchoProvider({ chunkSize: 2 }) });
    const bus = countingBus();
    const runtime = createTetherRuntime({ ...deps, bus });
    const events = await collect(
      runtime.streamTurn(textCommand("sub-1", "streamed live"), new AbortController().signal),
    );
    expect(textOf(events)).toBe("streamed live");
    expect(events.at(-1)?.event.type).toBe("turn_completed");
    expect(bus.unheard).toEqual([]);
    expect(bus.heard).toBeGreaterThanOrEqual(events.length);
  });

  it("stops listening once the call ends, and when it fails before following the turn", async () => {
    const { deps } = createRuntimeHarness({ provider: createEchoProvider() });
    const bus = countingBus();
    const failing = {
      ...deps,
      bus,
      ready: {
        ...deps.ready,
        markReady: () => Promise.reject(new Error("ready index down")),
      },
    };
    const runtime = createTetherRuntime(failing);
    await expect(
      collect(runtime.streamTurn(textCommand("sub-2", "x"), new AbortController().signal)),
    ).rejects.toThrow("ready index down");
    // A later publish for the session finds nobody listening.
    bus.publish({
      cursor: 1,
      sessionId: "sub-2",
      turnId: "t",
      event: { type: "text_delta", text: "late" },
    });
    expect(bus.unheard).toEqual(["text_delta"]);
  });
});
