// The before-completion checkpoint's claim is skipped only when no steer can be pending for the
// turn (ADR 0041): a plain turn started in one step claims nothing there, a steer acknowledged
// while the turn's model call is held still enters the turn, and a steer stored for a turn
// before it started is admitted as ever. Memory, Redis (one replica and two) and Redis Cluster,
// where the skip is not offered and the turn claims as before.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import type { InputClaimPoint } from "../../../src/domain/inputs.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import { turnIdOfInput } from "../../../src/ports/turn-ids.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { createScriptedProvider, type ScriptedProvider } from "../../../src/providers/scripted.js";
import { encodeInputPayload } from "../../../src/runtime/turn/input-payload.js";
import {
  collect,
  createRuntimeHarness,
  textCommand,
  type RuntimeHarness,
  type RuntimeHarnessOptions,
} from "../../support/runtime-harness.js";
import { connectBothForFile } from "../../support/redis-store-factory.js";

const { redis, cluster } = connectBothForFile();
const signal = () => AbortSignal.timeout(15_000);

/** Answers each call with plain text, naming the steer when the model saw it. */
function answering(): ScriptedProvider {
  return createScriptedProvider({
    script: (request) => {
      const seen = JSON.stringify(request.messages).includes("steered in");
      const text = seen ? "with the steer" : "plain answer";
      return { events: [{ type: "text_delta", text }], response: { fullText: text } };
    },
  });
}

/** The first model call waits for `release`; `called` resolves when it has begun. */
function holdingFirstCall(inner: ScriptedProvider) {
  let release: () => void = () => undefined;
  let begun: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const called = new Promise<void>((resolve) => (begun = resolve));
  let calls = 0;
  const provider: ModelProvider = {
    name: inner.name,
    capabilities: inner.capabilities,
    call(request) {
      const first = calls++ === 0;
      return (async function* () {
        if (first) {
          begun();
          await gate;
        }
        const call = inner.call(request);
        for (;;) {
          const step = await call.next();
          if (step.done === true) return step.value;
          yield step.value;
        }
      })();
    },
  };
  return { provider, release: () => release(), called };
}

/** Counts claimInputs calls at checkpoints. */
function countingCheckpointClaims() {
  const counted = { checkpoint: 0 };
  const wrapStore = (store: RuntimeStore): RuntimeStore => ({
    ...store,
    claimInputs: (fence, point: InputClaimPoint, max) => {
      if (point.kind === "checkpoint") counted.checkpoint += 1;
      return store.claimInputs(fence, point, max);
    },
  });
  return { counted, wrapStore };
}

const backends = [
  { name: "memory", options: {}, skips: true },
  { name: "redis", options: { redis }, skips: true },
  { name: "redis cluster", options: { redis: cluster }, skips: false },
] satisfies { name: string; options: Partial<RuntimeHarnessOptions>; skips: boolean }[];

for (const backend of backends) {
  describe(`the before-completion claim on ${backend.name} (issue 39)`, () => {
    const closing: RuntimeHarness[] = [];
    afterEach(async () => {
      for (const h of closing.splice(0)) await h.runtime.drain(1_000);
    });
    const harness = (
      options: Partial<RuntimeHarnessOptions> & Pick<RuntimeHarnessOptions, "provider">,
    ) => {
      const h = createRuntimeHarness({ ...backend.options, ...options });
      closing.push(h);
      return h;
    };

    it(`a plain turn with nothing pending ${backend.skips ? "issues no" : "still issues its"} checkpoint claim`, async () => {
      const { counted, wrapStore } = countingCheckpointClaims();
      const { runtime } = harness({ provider: answering(), wrapStore });
      const sessionId = `plain-${randomUUID()}`;
      const events = await collect(runtime.streamTurn(textCommand(sessionId, "hi"), signal()));
      expect(events.at(-1)?.event.type).toBe("turn_completed");
      expect(counted.checkpoint).toBe(backend.skips ? 0 : 1);
      // A second turn of the same session, started in one step too, skips likewise.
      await collect(runtime.streamTurn(textCommand(sessionId, "again"), signal()));
      expect(counted.checkpoint).toBe(backend.skips ? 0 : 2);
    });

    it("a steer acknowledged while the turn's model call is held enters that turn", async () => {
      const model = answering();
      const held = holdingFirstCall(model);
      const { runtime, store } = harness({ provider: held.provider });
      const sessionId = `held-${randomUUID()}`;
      const turn = collect(runtime.streamTurn(textCommand(sessionId, "start"), signal()));
      await held.called;
      const steer = runtime
        .streamTurn(textCommand(sessionId, "steered in", { busyStrategy: "steer" }), signal())
        [Symbol.asyncIterator]();
      // Acknowledged: the stream said input_queued, so the input is stored.
      const queued = await steer.next();
      expect(queued.done !== true && queued.value.event.type).toBe("input_queued");
      held.release();
      const [events, rest] = await Promise.all([
        turn,
        collect({ [Symbol.asyncIterator]: () => steer }),
      ]);
      expect(events.at(-1)?.event.type).toBe("turn_completed");
      expect(rest.map((e) => e.event.type)).toContain("input_admitted");
      // The same turn called the model again with the steer: one turn, both inputs consumed.
      expect(model.requests).toHaveLength(2);
      expect(JSON.stringify(model.requests[1])).toContain("steered in");
      const session = await store.loadSession(sessionId as SessionId);
      expect(session?.turnIndex).toBe(1);
      expect(await store.listInputs(sessionId as SessionId)).toEqual([]);
    });

    it("a steer stored for a turn before it started is admitted at its checkpoint as before", async () => {
      const model = answering();
      const held = holdingFirstCall(model);
      const { counted, wrapStore } = countingCheckpointClaims();
      const { runtime, store } = harness({ provider: held.provider, wrapStore });
      const sessionId = `early-${randomUUID()}`;
      const first = collect(runtime.streamTurn(textCommand(sessionId, "first"), signal()));
      await held.called;
      // The next input waits behind the running turn; a steer names the turn that will take it.
      const next = await store.submitInput({
        sessionId: sessionId as SessionId,
        delivery: { kind: "next_turn" },
        payload: encodeInputPayload({
          items: [{ type: "text", text: "second" }],
          clientTools: [],
          settings: {},
        }),
      });
      const secondTurn = turnIdOfInput(sessionId as SessionId, next.input.inputId);
      await store.submitInput({
        sessionId: sessionId as SessionId,
        delivery: { kind: "active_turn", turnId: secondTurn, minBoundary: "before_completion" },
        payload: encodeInputPayload({
          items: [{ type: "text", text: "steered in early" }],
          clientTools: [],
          settings: {},
        }),
      });
      held.release();
      await first;
      await expect
        .poll(async () => (await store.loadSession(sessionId as SessionId))?.turnIndex, {
          timeout: 10_000,
        })
        .toBe(2);
      // The second turn (claimed by the driver, not started in one step) claimed and admitted it.
      expect(model.requests).toHaveLength(3);
      expect(JSON.stringify(model.requests[2])).toContain("steered in early");
      expect(counted.checkpoint).toBeGreaterThanOrEqual(backend.skips ? 1 : 2);
      expect(await store.listInputs(sessionId as SessionId)).toEqual([]);
    });
  });
}

describe("the before-completion claim with two Redis replicas (issue 39)", () => {
  const closing: RuntimeHarness[] = [];
  afterEach(async () => {
    for (const h of closing.splice(0)) await h.runtime.drain(1_000);
  });

  it("a steer acknowledged by another replica while the model call is held enters the turn", async () => {
    const namespace = `steer-${randomUUID()}`;
    const model = answering();
    const held = holdingFirstCall(model);
    const { counted, wrapStore } = countingCheckpointClaims();
    const running = createRuntimeHarness({
      ...{ redis, namespace, provider: held.provider, wrapStore },
      ownerId: "replica-a",
    });
    const other = createRuntimeHarness({
      ...{ redis, namespace, provider: answering() },
      ownerId: "replica-b",
    });
    closing.push(running, other);
    const sessionId = `two-${randomUUID()}`;
    const turn = collect(running.runtime.streamTurn(textCommand(sessionId, "start"), signal()));
    await held.called;
    const queued = await other.runtime.submitTurn(
      textCommand(sessionId, "steered in", { busyStrategy: "steer" }),
    );
    expect(queued.queued).toBe(true);
    held.release();
    const events = await turn;
    expect(events.at(-1)?.event.type).toBe("turn_completed");
    expect(model.requests).toHaveLength(2);
    expect(JSON.stringify(model.requests[1])).toContain("steered in");
    // The steer was heard: the checkpoint claimed (once, and took it).
    expect(counted.checkpoint).toBe(1);
    expect((await running.store.loadSession(sessionId as SessionId))?.turnIndex).toBe(1);
  });
});
