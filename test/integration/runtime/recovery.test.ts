// Two replicas on one Redis: a holder that stalls past its lease loses the session to the other,
// which re-runs the turn from the committed head; nothing the stalled holder does afterwards
// becomes visible, and a client resumes its stream on the survivor.
import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import { isTetherError } from "../../../src/domain/errors.js";
import type { SessionId } from "../../../src/domain/ids.js";
import { fenceOf } from "../../../src/domain/lease.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { createEchoProvider, createScriptedProvider } from "../../../src/providers/scripted.js";
import { startSweeper } from "../../../src/runtime/background/sweeper.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import {
  collect,
  createRuntimeHarness,
  textCommand,
  textOf,
} from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

/** A store whose renewals fail: the replica keeps working but can no longer extend its lease. */
function stalledRenewals(store: RuntimeStore): RuntimeStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === "renewLeases") {
        return () => Promise.reject(new Error("renewal lost in a network partition"));
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

describe("recovery across replicas (Redis)", () => {
  it("a stalled holder's session is taken over after its TTL and the turn re-runs once", async () => {
    const namespace = `recovery-${randomUUID()}`;
    const stalledModel = createScriptedProvider({
      script: () => ({ events: [{ type: "text_delta", text: "stalled..." }], hang: true }),
    });
    const a = createRuntimeHarness({
      provider: stalledModel,
      redis,
      namespace,
      ownerId: "replica-a",
      leaseTtlMs: 300,
      wrapStore: stalledRenewals,
    });
    const b = createRuntimeHarness({
      provider: createEchoProvider({ chunkSize: 4 }),
      redis,
      namespace,
      ownerId: "replica-b",
      leaseTtlMs: 5_000,
    });
    const sessionId = "recover-me" as SessionId;

    // The client streams from replica A until the stall, remembering its cursor.
    const dropped = new AbortController();
    let cursor = 0;
    let turnId = "";
    for await (const item of a.runtime.streamTurn(
      textCommand(sessionId, "survive the stall"),
      dropped.signal,
    )) {
      cursor = item.cursor;
      turnId = item.turnId;
      if (item.event.type === "text_delta") break;
    }
    const aLease = await b.store.currentLease(sessionId);
    expect(aLease?.owner.ownerId).toBe("replica-a");

    // A's lease lapses (renewals fail); B's sweep takes the session over.
    await waitFor(async () => (await b.store.currentLease(sessionId)) === undefined, {
      what: "A's lease to lapse",
    });
    const sweeper = startSweeper({
      driver: b.runtime.driver,
      ready: b.deps.ready,
      logger: silentLogger,
      intervalMs: 60_000,
    });
    expect(await sweeper.sweepOnce()).toBe(1);
    sweeper.stop();

    // The client resumes on B from its cursor and sees the same turn re-run to completion.
    const rest = await collect(
      b.runtime.watch(sessionId, sessionId, cursor, true, AbortSignal.timeout(10_000)),
    );
    const restarted = rest.find((e) => e.event.type === "turn_started");
    expect(restarted?.turnId).toBe(turnId);
    expect(textOf(rest.filter((e) => e.cursor > (restarted?.cursor ?? 0)))).toBe(
      "survive the stall",
    );
    const done = rest.at(-1)?.event;
    expect(done?.type === "turn_completed" && done.headRevision).toBe(2);

    // Whatever A does now is refused: its events and its commit come from a superseded lease.
    expect((await b.store.currentLease(sessionId))?.owner.ownerId).not.toBe("replica-a");
    if (!aLease) throw new Error("replica A held the lease");
    const appendError = await a.log
      .append(
        sessionId,
        [{ turnId, event: { type: "text_delta", text: "ghost" } }],
        fenceOf(aLease),
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isTetherError(appendError, "session_execution_lease_expired")).toBe(true);
    const session = await b.store.loadSession(sessionId);
    expect(session?.headRevision).toBe(2);
    expect(session?.turnIndex).toBe(1);
    // Exactly one run landed: the user input and the survivor's answer.
    expect(session?.messages).toHaveLength(2);
    expect(session?.messages[1]).toContain("survive the stall");
    expect(await b.store.listInputs(sessionId)).toEqual([]);
    dropped.abort();
    await a.runtime.drain(1_000);
    await b.runtime.drain(1_000);
  });
});
