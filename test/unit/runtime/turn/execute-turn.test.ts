// executeTurn returns how the turn ended: each end a driver can meet, from a turn run on the
// memory backend with one store or log call made to fail where that end comes from.
import { describe, expect, it } from "vitest";
import {
  TetherError,
  queuedWorkClaimSuperseded,
  replicationUnconfirmed,
  storeUnavailable,
} from "../../../../src/domain/errors.js";
import type { ClaimId, SessionId } from "../../../../src/domain/ids.js";
import { fenceOf } from "../../../../src/domain/lease.js";
import { withoutAnnouncements } from "../../../support/unannouncing-store.js";
import type { EventLog } from "../../../../src/ports/event-log.js";
import type { RuntimeStore } from "../../../../src/ports/runtime-store.js";
import { createScriptedProvider } from "../../../../src/providers/scripted.js";
import { encodeInputPayload } from "../../../../src/runtime/turn/input-payload.js";
import { executeTurn, type TurnEnd } from "../../../../src/runtime/turn/index.js";
import type { ToolDefinition } from "../../../../src/ports/tool-executor.js";
import type { RuntimeDeps } from "../../../../src/runtime/deps.js";
import {
  createRuntimeHarness,
  type RuntimeHarnessOptions,
} from "../../../support/runtime-harness.js";

const SESSION = "s-end" as SessionId;

/** A store whose commit is refused with `error`. */
const refusingCommit =
  (error: TetherError) =>
  (store: RuntimeStore): RuntimeStore =>
    new Proxy(store, {
      get(target, property, receiver) {
        if (property === "commit") return () => Promise.reject(error);
        return Reflect.get(target, property, receiver) as unknown;
      },
    });

/** A store where a metadata update lands just before each of the turn's first `races` commits. */
const updatesWinTheRace =
  (races: number) =>
  (store: RuntimeStore): RuntimeStore => {
    let lost = 0;
    return new Proxy(store, {
      get(target, property, receiver) {
        if (property !== "commit") return Reflect.get(target, property, receiver) as unknown;
        return async (commit: Parameters<RuntimeStore["commit"]>[0]) => {
          if (commit.stamp !== undefined && lost < races) {
            lost++;
            const head = (await target.loadSession(commit.sessionId))?.headRevision ?? 0;
            await target.commit({
              sessionId: commit.sessionId,
              expectedHeadRevision: head,
              appendMessages: [],
              metadataPatch: { [`k${lost}`]: "v" },
            });
          }
          return target.commit(commit);
        };
      },
    });
  };

/** A log that refuses the append carrying the turn's completion. */
function refusingCompletion(log: EventLog): EventLog {
  return new Proxy(log, {
    get(target, property, receiver) {
      if (property === "append") {
        return (...args: Parameters<EventLog["append"]>) =>
          args[1].some((e) => e.event.type === "turn_completed")
            ? Promise.reject(storeUnavailable("log away"))
            : target.append(...args);
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

interface RunOptions extends Partial<RuntimeHarnessOptions> {
  signal?: AbortSignal;
  closing?: AbortSignal;
  clientTools?: ToolDefinition[];
  onDeps?: (deps: RuntimeDeps) => void;
}

const saysHello = createScriptedProvider({
  script: () => ({ events: [{ type: "text_delta", text: "hello" }], response: {} }),
});

/** A model that asks the client's tool `ask` for something. */
const asksClient = createScriptedProvider({
  script: () => ({
    response: {
      parts: [{ type: "tool_call", callId: "ask-1", toolName: "ask", argumentsJson: "{}" }],
    },
  }),
});
const ask: ToolDefinition = { name: "ask", description: "", inputSchema: { type: "object" } };

async function runOneTurn(
  options: RunOptions = {},
): Promise<{ end: TurnEnd; store: RuntimeStore }> {
  const { signal, closing, clientTools, onDeps, ...harness } = options;
  const { deps, store } = createRuntimeHarness({ provider: saysHello, ...harness });
  onDeps?.(deps);
  await store.submitInput({
    sessionId: SESSION,
    delivery: { kind: "next_turn" },
    payload: encodeInputPayload({
      items: [{ type: "text", text: "hi" }],
      clientTools: clientTools ?? [],
      settings: {},
    }),
  });
  const claim = await store.tryClaimLease(SESSION, deps.owner, 5_000);
  if (claim.kind !== "acquired") throw new Error("the session is busy");
  const fence = fenceOf(claim.lease);
  const inputs = await store.claimInputs(fence, { kind: "idle" }, 1);
  const end = await executeTurn(deps, {
    fence,
    inputs,
    work: undefined,
    signal: signal ?? new AbortController().signal,
    ...(closing && { closing }),
  });
  return { end, store };
}

describe("executeTurn's end", () => {
  it("is finished, with the outcome and the new head, when the turn committed", async () => {
    const { end, store } = await runOneTurn();
    expect(end).toEqual({
      kind: "finished",
      turnId: expect.stringMatching(/^turn-/) as unknown,
      outcome: { kind: "finished", reason: "assistant_message", text: "hello" },
      headRevision: 2,
      // Nothing else waited: the commit released the lease in its step (ADR 0011).
      released: true,
    });
    // The input created the session at revision 1; the turn's commit made 2.
    expect((await store.loadSession(SESSION))?.headRevision).toBe(2);
    expect(await store.currentLease(SESSION)).toBeUndefined();
  });

  it("is finished after a dozen metadata updates won the head race before its commits", async () => {
    const { end, store } = await runOneTurn({ wrapStore: updatesWinTheRace(12) });
    // Revision 1 is the input, 2..13 the twelve updates, 14 the turn.
    expect(end).toMatchObject({ kind: "finished", headRevision: 14 });
    const session = await store.loadSession(SESSION);
    expect(session?.turnIndex).toBe(1);
    expect(Object.keys(session?.metadata ?? {})).toHaveLength(12);
  });

  it("is lease_lost, uncommitted, when the job's signal says the lease went", async () => {
    const lost = new AbortController();
    const reason = new Error("lease gone");
    lost.abort(reason);
    const { end, store } = await runOneTurn({ signal: lost.signal });
    expect(end).toMatchObject({ kind: "lease_lost", cause: reason });
    expect((await store.loadSession(SESSION))?.turnIndex ?? 0).toBe(0);
  });

  it("is lease_lost when the commit finds its claim superseded", async () => {
    const superseded = queuedWorkClaimSuperseded(SESSION, "c-1" as ClaimId);
    const { end } = await runOneTurn({ wrapStore: refusingCommit(superseded) });
    expect(end).toMatchObject({ kind: "lease_lost", cause: superseded });
  });

  it("is commit_unknown when the store went away at the commit (it may have landed)", async () => {
    const away = storeUnavailable("connection lost");
    const { end, store } = await runOneTurn({ wrapStore: refusingCommit(away) });
    expect(end).toMatchObject({ kind: "commit_unknown", cause: away });
    expect((await store.loadSession(SESSION))?.turnIndex ?? 0).toBe(0);
  });

  it("is commit_unknown when replicas did not confirm the commit in time", async () => {
    const unconfirmed = replicationUnconfirmed(2, 1, 500);
    const { end } = await runOneTurn({ wrapStore: refusingCommit(unconfirmed) });
    expect(end).toMatchObject({ kind: "commit_unknown", cause: unconfirmed });
  });

  it("is failed when the commit is refused for a reason that says it did not land", async () => {
    const refused = new TetherError("head_revision_conflict", "head moved");
    const { end } = await runOneTurn({ wrapStore: refusingCommit(refused) });
    expect(end).toMatchObject({ kind: "failed", cause: refused });
  });

  it("is unannounced, with the head it committed, when turn_completed misses the log", async () => {
    // A store that announces in the commit's step has no such window: one that does not.
    const { end, store } = await runOneTurn({
      wrapLog: refusingCompletion,
      wrapStore: withoutAnnouncements,
    });
    expect(end).toMatchObject({ kind: "unannounced", headRevision: 2 });
    expect((await store.loadSession(SESSION))?.headRevision).toBe(2);
  });

  it("is parked, with the store's receipt, when the turn waits only for a client", async () => {
    const { end, store } = await runOneTurn({
      provider: asksClient,
      clientTools: [ask],
      parkAfterMs: 0,
    });
    expect(end).toMatchObject({ kind: "parked", receipt: { resumable: false } });
    const parked = await store.readParkedTurn(SESSION);
    expect(parked?.waitingOn).toEqual([{ kind: "result", callId: "ask-1" }]);
    expect(end.kind === "parked" && end.receipt.expiresAtMs).toBe(parked?.expiresAtMs);
  });

  it("is handed_over, uncommitted, when a closing replica cannot park a waiting turn", async () => {
    const closing = new AbortController();
    closing.abort();
    const { end, store } = await runOneTurn({
      provider: asksClient,
      clientTools: [ask],
      maxParkedProgressBytes: 1,
      closing: closing.signal,
    });
    expect(end).toMatchObject({ kind: "handed_over" });
    expect(await store.readParkedTurn(SESSION)).toBeUndefined();
    expect((await store.loadSession(SESSION))?.headRevision).toBe(1);
  });

  it("is cancelled, with the new head, when CancelTurn reaches a running turn", async () => {
    let deps: RuntimeDeps | undefined;
    /** Once the turn waits for the client (its call is recorded), the client cancels it. */
    const cancelOnWait = (store: RuntimeStore): RuntimeStore =>
      new Proxy(store, {
        get(target, property, receiver) {
          if (property === "recordToolCalls") {
            return async (...args: Parameters<RuntimeStore["recordToolCalls"]>) => {
              const states = await target.recordToolCalls(...args);
              await deps?.signals.requestCancel(SESSION, args[1]);
              return states;
            };
          }
          return Reflect.get(target, property, receiver) as unknown;
        },
      });
    const { end } = await runOneTurn({
      provider: asksClient,
      clientTools: [ask],
      parkAfterMs: Infinity,
      wrapStore: cancelOnWait,
      onDeps: (d) => (deps = d),
    });
    expect(end).toMatchObject({ kind: "cancelled", headRevision: 2 });
  });
});
