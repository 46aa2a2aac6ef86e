// Every paged List* RPC pages one way: an opaque page_token/next_page_token (never a raw id), a
// token this server did not issue refused naming page_token; ListSessions reads a page of
// sessions in one store call, whatever the page holds; ListWork and ListInputs page too, and cut a
// page short to fit the response limit.
import {
  Code,
  createClient,
  createContextValues,
  createRouterTransport,
} from "@connectrpc/connect";
import { describe, expect, test } from "vitest";
import { createAgentService } from "../../../src/api/agent-service.js";
import { createQueueService } from "../../../src/api/queue-service.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { scopeOf } from "../../../src/api/tenancy.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { DeliveryPolicy, SlotPolicy, WorkClass } from "../../../src/gen/tether/v1/queue_pb.js";
import { QueueService } from "../../../src/gen/tether/v1/queue_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { createManualClock } from "../../../src/ports/clock.js";
import { createTetherInterceptors } from "../../../src/server/routes.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import { expectCode, violatedFields } from "../../support/api-clients.js";

/** A memory store that counts the calls of each operation. */
function countingStore(maxResponseBytes?: number) {
  const inner = createMemoryStore({ clock: createManualClock() });
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return (...args: unknown[]) => {
        calls.set(name, (calls.get(name) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as RuntimeStore;
  const transport = createRouterTransport(
    (router) => {
      router.service(
        SessionService,
        createSessionService({
          store,
          ...(maxResponseBytes !== undefined && { maxResponseBytes }),
        }),
      );
      router.service(AgentService, createAgentService(store));
      router.service(
        QueueService,
        createQueueService({ store, ...(maxResponseBytes !== undefined && { maxResponseBytes }) }),
      );
    },
    {
      router: {
        interceptors: createTetherInterceptors({
          apiKeys: undefined,
          requestTimeoutMs: 10_000,
          log: { error: () => undefined },
        }),
      },
    },
  );
  return {
    inner,
    calls,
    sessions: createClient(SessionService, transport),
    agents: createClient(AgentService, transport),
    queue: createClient(QueueService, transport),
  };
}

/** The store ids the services use for a caller without a tenant. */
const storeId = (id: string) => scopeOf(createContextValues()).toStore(id, "session_id");
const owner = { ownerId: "w", incarnationId: "i", liveness: { kind: "opaque" as const } };

describe("list paging", () => {
  test("ListSessions reads a page in one store call and still shows each lease and parked turn", async () => {
    const { inner, calls, sessions } = countingStore();
    for (const id of ["s1", "s2", "s3", "s4", "s5"])
      await sessions.createSession({ sessionId: id });
    const held = await inner.tryClaimLease(storeId("s2"), owner, 60_000);
    if (held.kind !== "acquired") throw new Error("expected the lease");
    const parker = await inner.tryClaimLease(storeId("s4"), owner, 60_000);
    if (parker.kind !== "acquired") throw new Error("expected the lease");
    await inner.parkTurn(fenceOf(parker.lease), {
      turnId: "t-4",
      waitingOn: [{ kind: "result", callId: "c1" }],
      progress: "{}",
      inputIds: [],
      batchIds: [],
      ttlMs: 60_000,
    });
    calls.clear();

    const page = await sessions.listSessions({ pageSize: 5 });
    expect(page.sessions.map((s) => s.sessionId)).toEqual(["s1", "s2", "s3", "s4", "s5"]);
    expect(page.sessions[1]?.lease?.owner?.ownerId).toBe("w");
    expect(page.sessions[3]?.parkedTurn?.turnId).toBe("t-4");
    expect(page.sessions[0]?.lease).toBeUndefined();
    expect(Object.fromEntries(calls)).toEqual({ listSessions: 1, readSessionSummaries: 1 });
  });

  test("ListSessions and ListAgents hand out opaque tokens that chain the pages", async () => {
    const { sessions, agents } = countingStore();
    for (const id of ["a", "b", "c"]) {
      await sessions.createSession({ sessionId: id });
      await agents.createAgent({ agentId: id });
    }
    const firstSessions = await sessions.listSessions({ pageSize: 2 });
    const firstAgents = await agents.listAgents({ pageSize: 2 });
    expect(firstAgents.agents.map((a) => a.agentId)).toEqual(["a", "b"]);
    for (const token of [firstSessions.nextPageToken, firstAgents.nextPageToken]) {
      // Opaque: neither the last id itself nor anything that reads as one.
      expect(token).not.toBe("");
      expect(token).not.toBe("b");
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/u);
    }
    const nextAgents = await agents.listAgents({
      pageSize: 2,
      pageToken: firstAgents.nextPageToken,
    });
    expect(nextAgents.agents.map((a) => a.agentId)).toEqual(["c"]);
    expect(nextAgents.nextPageToken).toBe("");
    const nextSessions = await sessions.listSessions({
      pageSize: 2,
      pageToken: firstSessions.nextPageToken,
    });
    expect(nextSessions.sessions.map((s) => s.sessionId)).toEqual(["c"]);
  });

  test("a token this server did not issue is INVALID_ARGUMENT naming page_token", async () => {
    const { sessions, agents } = countingStore();
    await agents.createAgent({ agentId: "a" });
    // A raw id (how ListAgents paged before), garbage, and base64 of another shape.
    const forged = Buffer.from('{"offset":2}', "utf8").toString("base64url");
    for (const token of ["a", "garbage!", forged]) {
      for (const call of [
        () => sessions.listSessions({ pageToken: token }),
        () => agents.listAgents({ pageToken: token }),
      ]) {
        const error = await expectCode(call(), Code.InvalidArgument);
        expect(violatedFields(error)).toEqual(["page_token"]);
      }
    }
  });

  /** Enqueues `n` batches and submits `n` inputs to `sessionId`, each payload `payload`. */
  async function fill(
    queue: ReturnType<typeof countingStore>["queue"],
    sessionId: string,
    n: number,
    payload: (i: number) => string,
  ) {
    for (let i = 0; i < n; i++) {
      await queue.enqueueWork({
        draft: {
          sessionId,
          workClass: WorkClass.TURN_WORK,
          deliveryPolicy: DeliveryPolicy.EARLIEST_SAFE_BOUNDARY,
          slotPolicy: SlotPolicy.EXCLUSIVE,
          payload: payload(i),
        },
      });
      await queue.submitInput({
        sessionId,
        delivery: { kind: { case: "nextTurn", value: {} } },
        payload: payload(i),
      });
    }
  }

  test("ListWork and ListInputs page with opaque tokens: pages chain in order, the last has none", async () => {
    const { queue } = countingStore();
    await fill(queue, "q", 5, (i) => `p${i}`);
    const work: string[] = [];
    const inputs: string[] = [];
    let workToken = "";
    let inputToken = "";
    let pages = 0;
    do {
      const w = await queue.listWork({ sessionId: "q", pageSize: 2, pageToken: workToken });
      const i = await queue.listInputs({ sessionId: "q", pageSize: 2, pageToken: inputToken });
      expect(w.batches.length).toBeLessThanOrEqual(2);
      expect(i.inputs.length).toBeLessThanOrEqual(2);
      work.push(...w.batches.map((b) => b.payload));
      inputs.push(...i.inputs.map((x) => x.payload));
      for (const token of [w.nextPageToken, i.nextPageToken]) {
        if (token !== "") expect(token).toMatch(/^[A-Za-z0-9_-]+$/u);
      }
      workToken = w.nextPageToken;
      inputToken = i.nextPageToken;
      pages++;
    } while (workToken !== "" && pages < 10);
    expect(pages).toBe(3);
    expect(inputToken).toBe("");
    expect(work).toEqual(["p0", "p1", "p2", "p3", "p4"]);
    expect(inputs).toEqual(["p0", "p1", "p2", "p3", "p4"]);
    // Without a page size, the default (100) holds all five in one page.
    const all = await queue.listWork({ sessionId: "q" });
    expect(all.batches).toHaveLength(5);
    expect(all.nextPageToken).toBe("");

    // The same refusals as every List RPC.
    const forged = Buffer.from('{"offset":2}', "utf8").toString("base64url");
    for (const pageToken of ["1", "garbage!", forged]) {
      for (const call of [
        () => queue.listWork({ sessionId: "q", pageToken }),
        () => queue.listInputs({ sessionId: "q", pageToken }),
      ]) {
        expect(violatedFields(await expectCode(call(), Code.InvalidArgument))).toEqual([
          "page_token",
        ]);
      }
    }
    for (const call of [
      () => queue.listWork({ sessionId: "q", pageSize: 1001 }),
      () => queue.listInputs({ sessionId: "q", pageSize: 1001 }),
    ]) {
      expect(violatedFields(await expectCode(call(), Code.InvalidArgument))).toEqual(["page_size"]);
    }
  });

  test("a ListWork or ListInputs page is cut short to fit the response limit, and its token goes on from there", async () => {
    // Three payloads of 4 kB each under a 10 kB limit: two fit in one answer, three do not.
    const { queue } = countingStore(10_000);
    await fill(queue, "big", 3, (i) => `${i}`.repeat(4_000));
    const firstWork = await queue.listWork({ sessionId: "big" });
    const firstInputs = await queue.listInputs({ sessionId: "big" });
    expect(firstWork.batches.map((b) => b.payload[0])).toEqual(["0", "1"]);
    expect(firstInputs.inputs.map((i) => i.payload[0])).toEqual(["0", "1"]);
    const restWork = await queue.listWork({
      sessionId: "big",
      pageToken: firstWork.nextPageToken,
    });
    const restInputs = await queue.listInputs({
      sessionId: "big",
      pageToken: firstInputs.nextPageToken,
    });
    expect(restWork.batches.map((b) => b.payload[0])).toEqual(["2"]);
    expect(restInputs.inputs.map((i) => i.payload[0])).toEqual(["2"]);
    expect([restWork.nextPageToken, restInputs.nextPageToken]).toEqual(["", ""]);

    // One item larger than any answer: refused naming page_size, never a transport failure.
    await fill(queue, "huge", 1, () => "x".repeat(12_000));
    for (const call of [
      () => queue.listWork({ sessionId: "huge" }),
      () => queue.listInputs({ sessionId: "huge" }),
    ]) {
      expect(violatedFields(await expectCode(call(), Code.FailedPrecondition))).toEqual([
        "page_size",
      ]);
    }
  });

  test("a ListMessages page is cut at whole revisions to fit the response limit; one revision too large for any answer is refused", async () => {
    const { inner, sessions } = countingStore(10_000);
    await sessions.createSession({ sessionId: "long" });
    for (let i = 1; i <= 3; i++) {
      const head = (await inner.loadSession(storeId("long")))?.headRevision ?? 0;
      await inner.commit({
        sessionId: storeId("long"),
        expectedHeadRevision: head,
        // Stamped as the runtime stamps what it commits: with the revision it lands in.
        appendMessages: [JSON.stringify({ note: `${i}`.repeat(4_000), revision: head + 1 })],
      });
    }
    const first = await sessions.listMessages({ sessionId: "long" });
    expect(first.messages).toHaveLength(2);
    expect(first.nextPageToken).not.toBe("");
    const rest = await sessions.listMessages({ sessionId: "long", pageToken: first.nextPageToken });
    expect(rest.messages).toHaveLength(1);
    expect(rest.nextPageToken).toBe("");
    const revisions = [...first.messages, ...rest.messages].map((m) => m.revision);
    expect(new Set(revisions).size).toBe(3);

    const head = (await inner.loadSession(storeId("long")))?.headRevision ?? 0;
    await inner.commit({
      sessionId: storeId("long"),
      expectedHeadRevision: head,
      appendMessages: [JSON.stringify({ note: "x".repeat(12_000), revision: head + 1 })],
    });
    // The large revision alone is the page after the third, and no answer can hold it.
    const last = await expectCode(
      sessions.listMessages({ sessionId: "long", afterRevision: revisions[2] ?? 0n }),
      Code.FailedPrecondition,
    );
    expect(violatedFields(last)).toEqual(["page_size"]);
  });
});
