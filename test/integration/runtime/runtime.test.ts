import { Redis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { createEchoProvider, createScriptedProvider } from "../../../src/providers/scripted.js";
import {
  collect,
  createRuntimeHarness as createHarness,
  textCommand,
  textOf,
  type RuntimeHarnessOptions,
} from "../../support/runtime-harness.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

const backends = [
  { name: "memory", connection: undefined },
  { name: "redis", connection: redis },
] as const;

for (const backend of backends) {
  const createRuntimeHarness = (options: RuntimeHarnessOptions) =>
    createHarness({ ...options, ...(backend.connection ? { redis: backend.connection } : {}) });
  describeRuntime(backend.name, createRuntimeHarness);
}

function describeRuntime(
  name: string,
  createRuntimeHarness: (options: RuntimeHarnessOptions) => ReturnType<typeof createHarness>,
): void {
  const signal = () => AbortSignal.timeout(10_000);

  describe(`runtime on ${name}: streaming turns`, () => {
    it("streams a turn and commits it as head revision 2 (its input created the session at 1), consuming the input", async () => {
      const { runtime, store } = createRuntimeHarness({
        provider: createEchoProvider({ chunkSize: 4 }),
      });
      const events = await collect(runtime.streamTurn(textCommand("s1", "hello tether"), signal()));
      const types = events.map((e) => e.event.type);
      expect(types[0]).toBe("turn_started");
      expect(types.at(-1)).toBe("turn_completed");
      expect(types).toContain("usage_reported");
      expect(textOf(events)).toBe("hello tether");
      const done = events.at(-1)?.event;
      expect(done?.type === "turn_completed" && done.headRevision).toBe(2);
      expect(done?.type === "turn_completed" && done.outcome.kind).toBe("finished");
      const session = await store.loadSession("s1" as SessionId);
      expect(session?.headRevision).toBe(2);
      expect(session?.turnIndex).toBe(1);
      expect(await store.listInputs("s1" as SessionId)).toEqual([]);
      // Cursors only grow.
      const cursors = events.map((e) => e.cursor);
      expect([...cursors].sort((a, b) => a - b)).toEqual(cursors);
    });

    it("queues a second input behind a running turn and streams each client its own turn", async () => {
      const { runtime, store } = createRuntimeHarness({
        provider: createEchoProvider({ chunkSize: 2 }),
      });
      const [a, b] = await Promise.all([
        collect(runtime.streamTurn(textCommand("s2", "first input"), signal())),
        collect(runtime.streamTurn(textCommand("s2", "second input"), signal())),
      ]);
      expect(textOf(a)).toBe("first input");
      expect(textOf(b)).toBe("second input");
      const heads = [a, b].map((events) => {
        const last = events.at(-1)?.event;
        return last?.type === "turn_completed" ? last.headRevision : -1;
      });
      expect(heads.sort()).toEqual([2, 3]);
      expect((await store.loadSession("s2" as SessionId))?.turnIndex).toBe(2);
    });

    it("a retried request with the same client request id follows the same input", async () => {
      const { runtime, store } = createRuntimeHarness({ provider: createEchoProvider() });
      const first = await collect(
        runtime.streamTurn(textCommand("s3", "once", { clientRequestId: "req-1" }), signal()),
      );
      const retry = await collect(
        runtime.streamTurn(textCommand("s3", "once", { clientRequestId: "req-1" }), signal()),
      );
      expect(textOf(retry)).toBe("once");
      expect(retry.at(-1)?.cursor).toBe(first.at(-1)?.cursor);
      expect((await store.loadSession("s3" as SessionId))?.headRevision).toBe(2);
    });

    it("runs a client-executed tool: the stream requests it and SubmitToolResults answers", async () => {
      const provider = createScriptedProvider({
        script: [
          {
            response: {
              parts: [
                { type: "tool_call", callId: "c1", toolName: "lookup", argumentsJson: '{"q":"x"}' },
              ],
            },
          },
          {
            events: [{ type: "text_delta", text: "found it" }],
            response: { fullText: "found it" },
          },
        ],
      });
      const { runtime } = createRuntimeHarness({ provider });
      const seen: string[] = [];
      const stream = runtime.streamTurn(
        textCommand("s4", "look it up", {
          clientTools: [
            { name: "lookup", description: "finds things", inputSchema: { type: "object" } },
          ],
        }),
        signal(),
      );
      for await (const item of stream) {
        seen.push(item.event.type);
        if (item.event.type === "tool_call_requested") {
          expect(item.event.argumentsJson).toBe('{"q":"x"}');
          expect(item.event.idempotencyKey).toBe(`s4/${item.turnId}/c1`);
          await runtime.submitToolResults("s4" as SessionId, item.turnId, [
            { callId: "c1", output: "42", isError: false },
          ]);
        }
        if (item.event.type === "tool_call_finished") expect(item.event.output).toContain("42");
      }
      expect(seen).toContain("tool_call_requested");
      expect(seen).toContain("tool_call_finished");
      expect(seen.at(-1)).toBe("turn_completed");
    });

    it("once a client sees turn_completed of a turn that waited on it, a rewind finds no turn running (issue 35)", async () => {
      const provider = createScriptedProvider({
        script: [
          {
            response: {
              parts: [{ type: "tool_call", callId: "c1", toolName: "lookup", argumentsJson: "{}" }],
            },
          },
          { response: { fullText: "found", parts: [{ type: "text", text: "found" }] } },
        ],
      });
      // Whatever the runtime still does with the store after the commit (closing the turn's calls
      // one by one) is held back until the client has looked: the look must not depend on it.
      let openGate: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const { runtime, store } = createRuntimeHarness({
        provider,
        wrapStore: (inner) => ({
          ...inner,
          closeToolCalls: async (fence, turnId, waits) => {
            if (waits === undefined) await gate;
            return inner.closeToolCalls(fence, turnId, waits);
          },
        }),
      });
      const sid = "s4b" as SessionId;
      let atCompletion: unknown;
      try {
        const stream = runtime.streamTurn(
          textCommand("s4b", "look it up", {
            clientTools: [{ name: "lookup", description: "d", inputSchema: { type: "object" } }],
          }),
          signal(),
        );
        for await (const item of stream) {
          if (item.event.type === "tool_call_requested") {
            await runtime.submitToolResults(sid, item.turnId, [
              { callId: "c1", output: "42", isError: false },
            ]);
          }
          if (item.event.type === "turn_completed") {
            const head = item.event.headRevision;
            atCompletion = {
              lease: await store.currentLease(sid),
              rewind: await store
                .rewindSession({ sessionId: sid, toRevision: 1, expectedHeadRevision: head })
                .then(
                  (r) => r.headRevision - head,
                  (e: unknown) => String(e),
                ),
            };
          }
        }
      } finally {
        openGate();
      }
      expect(atCompletion).toEqual({ lease: undefined, rewind: 1 });
    });

    it("a client tool that is never answered ends with a tool error result after its timeout", async () => {
      const provider = createScriptedProvider({
        script: [
          {
            response: {
              parts: [{ type: "tool_call", callId: "c9", toolName: "slow", argumentsJson: "{}" }],
            },
          },
          { response: { fullText: "gave up", parts: [{ type: "text", text: "gave up" }] } },
        ],
      });
      const { runtime } = createRuntimeHarness({ provider, clientToolTimeoutMs: 200 });
      const events = await collect(
        runtime.streamTurn(
          textCommand("s5", "go", {
            clientTools: [
              { name: "slow", description: "never answers", inputSchema: { type: "object" } },
            ],
          }),
          signal(),
        ),
      );
      const finished = events.find((e) => e.event.type === "tool_call_finished")?.event;
      expect(finished?.type === "tool_call_finished" && finished.isError).toBe(true);
      expect(events.at(-1)?.event.type).toBe("turn_completed");
    });

    it("CancelTurn stops a running turn as cancelled and the turn still commits its input", async () => {
      const provider = createScriptedProvider({
        script: [{ events: [{ type: "text_delta", text: "thinking" }], hang: true }],
      });
      const { runtime, store } = createRuntimeHarness({ provider });
      const events: string[] = [];
      let outcome: unknown;
      for await (const item of runtime.streamTurn(textCommand("s6", "long task"), signal())) {
        events.push(item.event.type);
        if (item.event.type === "text_delta")
          expect(await runtime.cancelTurn("s6" as SessionId)).toBe(true);
        if (item.event.type === "turn_completed") outcome = item.event.outcome;
      }
      expect(outcome).toEqual({ kind: "stopped", reason: "cancelled" });
      expect((await store.loadSession("s6" as SessionId))?.headRevision).toBe(2);
      expect(await store.listInputs("s6" as SessionId)).toEqual([]);
    });

    it("the reject strategy refuses while a turn runs, naming the holder", async () => {
      const provider = createScriptedProvider({
        script: [{ events: [{ type: "text_delta", text: "busy" }], hang: true }],
      });
      const { runtime } = createRuntimeHarness({ provider });
      const stream = runtime.streamTurn(textCommand("s7", "occupy"), signal());
      const running = stream[Symbol.asyncIterator]();
      await running.next(); // turn_started: the lease is held
      const refused = collect(
        runtime.streamTurn(textCommand("s7", "me too", { busyStrategy: "reject" }), signal()),
      );
      await expect(refused).rejects.toMatchObject({
        code: "session_busy",
        message: expect.stringContaining("test-replica"),
      });
      await runtime.cancelTurn("s7" as SessionId);
      for (let r = await running.next(); !r.done; r = await running.next());
    });
  });

  describe(`runtime on ${name}: busy strategies`, () => {
    it("steer: input sent while a turn runs enters it at the next checkpoint", async () => {
      let releaseTool: () => void = () => undefined;
      const toolGate = new Promise<void>((resolve) => {
        releaseTool = resolve;
      });
      const provider = createScriptedProvider({
        script: [
          {
            response: {
              parts: [{ type: "tool_call", callId: "w1", toolName: "wait", argumentsJson: "{}" }],
            },
          },
          { events: [{ type: "text_delta", text: "done" }], response: { fullText: "done" } },
        ],
      });
      const { runtime, store } = createRuntimeHarness({
        provider,
        serverTools: {
          definitions: () => [
            { name: "wait", description: "waits", inputSchema: { type: "object" } },
          ],
          execute: async () => {
            await toolGate;
            return { output: "waited" };
          },
        },
      });
      const first = runtime.streamTurn(textCommand("st1", "start work"), signal());
      const firstEvents: string[] = [];
      const firstDone = (async () => {
        for await (const item of first) {
          firstEvents.push(item.event.type);
          if (item.event.type === "tool_call_started") {
            // The turn is parked in its tool call: steer, then, once the steer is queued, let the
            // tool finish.
            const steer = runtime
              .streamTurn(textCommand("st1", "also do this", { busyStrategy: "steer" }), signal())
              [Symbol.asyncIterator]();
            const queued = await steer.next();
            releaseTool();
            return collect({ [Symbol.asyncIterator]: () => steer }).then((rest) =>
              queued.done === true ? rest : [queued.value, ...rest],
            );
          }
        }
        return [];
      })();
      const steeredEvents = await firstDone;
      // Queued as a steer, then admitted into the running turn, which the stream follows to its end.
      expect(steeredEvents.slice(0, 2).map((e) => e.event.type)).toEqual([
        "input_queued",
        "input_admitted",
      ]);
      expect(steeredEvents.at(-1)?.event.type).toBe("turn_completed");
      // One turn consumed both inputs; the model's second call saw the steer as a user message.
      expect(
        provider.requests[1]?.some(
          (m) => m.role === "user" && JSON.stringify(m).includes("also do this"),
        ),
      ).toBe(true);
      const session = await store.loadSession("st1" as SessionId);
      expect(session?.turnIndex).toBe(1);
      expect(await store.listInputs("st1" as SessionId)).toEqual([]);
    });

    it("interrupt: the running turn is cancelled, then the new input runs", async () => {
      const provider = createScriptedProvider({
        script: (request) => {
          const last = request.messages.at(-1);
          const text =
            last?.role === "user" && last.content[0]?.type === "text" ? last.content[0].text : "";
          return text === "long task"
            ? { events: [{ type: "text_delta", text: "working" }], hang: true }
            : {
                events: [{ type: "text_delta", text: "right away" }],
                response: { fullText: "right away" },
              };
        },
      });
      const { runtime, store } = createRuntimeHarness({ provider });
      const running = runtime
        .streamTurn(textCommand("it1", "long task"), signal())
        [Symbol.asyncIterator]();
      let step = await running.next();
      while (!step.done && step.value.event.type !== "text_delta") step = await running.next();
      const urgent = await collect(
        runtime.streamTurn(textCommand("it1", "urgent", { busyStrategy: "interrupt" }), signal()),
      );
      const rest: string[] = [];
      for (step = await running.next(); !step.done; step = await running.next()) {
        if (step.value.event.type === "turn_completed") rest.push(step.value.event.outcome.kind);
      }
      expect(rest).toEqual(["stopped"]);
      expect(textOf(urgent)).toBe("right away");
      const done = urgent.at(-1)?.event;
      expect(done?.type === "turn_completed" && done.headRevision).toBe(3);
      expect((await store.loadSession("it1" as SessionId))?.turnIndex).toBe(2);
    });
  });

  describe(`runtime on ${name}: resuming a dropped stream`, () => {
    it("WatchSession from the last cursor a client saw yields the rest with no gap and no duplicate", async () => {
      const text =
        "The quick brown fox jumps over the lazy dog, again and again, until the stream ends.";
      const { runtime } = createRuntimeHarness({ provider: createEchoProvider({ chunkSize: 3 }) });
      const dropped = new AbortController();
      const firstPart: string[] = [];
      let lastCursor = 0;
      let turnId = "";
      for await (const item of runtime.streamTurn(textCommand("r1", text), dropped.signal)) {
        lastCursor = item.cursor;
        turnId = item.turnId;
        if (item.event.type === "text_delta") firstPart.push(item.event.text);
        if (firstPart.length === 5) break; // the client's connection drops mid-turn
      }
      const rest = await collect(
        runtime.watch("r1" as SessionId, "r1", lastCursor, true, signal()),
      );
      expect(firstPart.join("") + textOf(rest)).toBe(text);
      expect(rest.every((e) => e.turnId === turnId)).toBe(true);
      expect(rest.at(-1)?.event.type).toBe("turn_completed");
      expect(rest.every((e) => e.cursor > lastCursor)).toBe(true);
    });

    it("a cursor older than the retained window gets a gap event with the committed state", async () => {
      const { runtime } = createRuntimeHarness({
        provider: createEchoProvider({ chunkSize: 1 }),
        logMaxEntries: 3,
      });
      await collect(
        runtime.streamTurn(textCommand("r2", "a long enough answer to overflow the log"), signal()),
      );
      const replay = await collect(
        runtime.watch("r2" as SessionId, "r2", 0, false, AbortSignal.timeout(300)),
      );
      const gap = replay[0]?.event;
      expect(gap?.type).toBe("gap");
      expect(gap?.type === "gap" && gap.snapshot?.headRevision).toBe(2);
      expect(replay.at(-1)?.event.type).toBe("turn_completed");
    });
  });
}
