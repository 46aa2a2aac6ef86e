// Every SessionService RPC, through the in-memory router transport and through the real server.
import { Code, createClient } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { LeaseService } from "../../../src/gen/tether/v1/lease_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { expectCode, TARGETS, violatedFields, type ApiTarget } from "../../support/api-clients.js";

const owner = {
  ownerId: "worker-1",
  incarnationId: "w1-a",
  liveness: { kind: { case: "opaque" as const, value: {} } },
};

describe.each(TARGETS)("SessionService via $name", ({ start }) => {
  let target: ApiTarget;
  beforeEach(async () => {
    target = await start();
  });
  afterEach(() => target.close());
  const sessions = () => createClient(SessionService, target.transport);

  test("CreateSession stores metadata at head revision 1 and refuses a second create", async () => {
    const res = await sessions().createSession({ sessionId: "chat-1", metadata: { topic: "x" } });
    expect(res.session?.sessionId).toBe("chat-1");
    expect(res.session?.headRevision).toBe(1n);
    expect(res.session?.metadata).toEqual({ topic: "x" });
    await expectCode(sessions().createSession({ sessionId: "chat-1" }), Code.AlreadyExists);
  });

  test("CreateSession generates an id when none is given", async () => {
    const res = await sessions().createSession({});
    expect(res.session?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("CreateSession refuses a bad id naming session_id", async () => {
    for (const bad of ["has space", "x".repeat(129), "a:b", "{tag}"]) {
      const error = await expectCode(
        sessions().createSession({ sessionId: bad }),
        Code.InvalidArgument,
      );
      expect(violatedFields(error)).toEqual(["session_id"]);
    }
  });

  test("GetSession returns state, the current lease holder and, on request, messages", async () => {
    await sessions().createSession({ sessionId: "g1" });
    const leases = createClient(LeaseService, target.transport);
    await leases.commit({ sessionId: "g1", expectedHeadRevision: 1n, appendMessages: ['{"m":1}'] });
    const claimed = await leases.claimLease({ sessionId: "g1", owner, ttlMs: 60_000n });
    expect(claimed.result.case).toBe("acquired");

    const res = await sessions().getSession({ sessionId: "g1", includeMessages: true });
    expect(res.session?.headRevision).toBe(2n);
    expect(res.messages).toEqual(['{"m":1}']);
    // An entry of a worker's own shape is shown typed as its JSON, without a role.
    expect(res.transcript.map((m) => [m.role, m.parts[0]?.kind.value])).toEqual([[0, '{"m":1}']]);
    expect(res.session?.lease?.owner?.ownerId).toBe("worker-1");
    expect(res.session?.lease?.sessionId).toBe("g1");
    const bare = await sessions().getSession({ sessionId: "g1" });
    expect(bare.messages).toEqual([]);
    await expectCode(sessions().getSession({ sessionId: "nope" }), Code.NotFound);
  });

  test("ListSessions pages in id order", async () => {
    for (const id of ["c", "a", "b"]) await sessions().createSession({ sessionId: id });
    const first = await sessions().listSessions({ pageSize: 2 });
    expect(first.sessions.map((s) => s.sessionId)).toEqual(["a", "b"]);
    expect(first.nextPageToken).not.toBe("");
    const second = await sessions().listSessions({ pageSize: 2, pageToken: first.nextPageToken });
    expect(second.sessions.map((s) => s.sessionId)).toEqual(["c"]);
    expect(second.nextPageToken).toBe("");
    await expectCode(sessions().listSessions({ pageSize: 1001 }), Code.InvalidArgument);
    await expectCode(sessions().listSessions({ pageToken: "garbage!" }), Code.InvalidArgument);
  });

  test("DeleteSession removes the session; a second delete is NOT_FOUND", async () => {
    await sessions().createSession({ sessionId: "d1" });
    await sessions().deleteSession({ sessionId: "d1" });
    await expectCode(sessions().getSession({ sessionId: "d1" }), Code.NotFound);
    await expectCode(sessions().deleteSession({ sessionId: "d1" }), Code.NotFound);
  });

  test("UpdateSessionMetadata sets and removes keys; a stale revision is ABORTED", async () => {
    await sessions().createSession({ sessionId: "u1", metadata: { a: "1", b: "2" } });
    const res = await sessions().updateSessionMetadata({
      sessionId: "u1",
      metadata: { a: "", c: "3" },
    });
    expect(res.session?.metadata).toEqual({ b: "2", c: "3" });
    expect(res.session?.headRevision).toBe(2n);
    const cas = await sessions().updateSessionMetadata({
      sessionId: "u1",
      metadata: { d: "4" },
      expectedHeadRevision: 2n,
    });
    expect(cas.session?.headRevision).toBe(3n);
    await expectCode(
      sessions().updateSessionMetadata({
        sessionId: "u1",
        metadata: { e: "5" },
        expectedHeadRevision: 2n,
      }),
      Code.Aborted,
    );
    await expectCode(
      sessions().updateSessionMetadata({ sessionId: "ghost", metadata: {} }),
      Code.NotFound,
    );
  });
});
