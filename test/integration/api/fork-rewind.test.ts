// Fork and rewind through SessionService: a rewind commits an earlier transcript as a new
// revision and the next turn's model sees only that; every revision stays readable (GetSession
// at_revision); a fork is a new session from any revision, with the source's agent binding, and
// the source is untouched. On memory and on Redis, with the typed errors of bad requests.
import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { createAgentService } from "../../../src/api/agent-service.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TranscriptMessage_Role as Role } from "../../../src/gen/tether/v1/transcript_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

let server: ApiServerHarness | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * Answers every turn with the user texts it was given, so a test sees what the model saw; "use
 * it" asks for the client tool `it` (the turn parks on it).
 */
const userTexts = () =>
  createScriptedProvider({
    script: (request) => {
      const last = request.messages.at(-1);
      if (
        last?.role === "user" &&
        last.content.some((c) => c.type === "text" && c.text === "use it")
      ) {
        return {
          response: {
            parts: [{ type: "tool_call", callId: "c1", toolName: "it", argumentsJson: "{}" }],
          },
        };
      }
      const said = request.messages.flatMap((m) =>
        m.role === "user" ? m.content.map((c) => (c.type === "text" ? c.text : "")) : [],
      );
      return { events: [{ type: "text_delta", text: `saw ${said.join(",")}` }], response: {} };
    },
  });

async function setup(backend: "memory" | "redis") {
  const { runtime, store } = createRuntimeHarness({
    provider: userTexts(),
    parkAfterMs: 0,
    ...(backend === "redis" ? { redis, namespace: `fork-${randomUUID()}` } : {}),
  });
  server = await startApiServer({
    routes: (router) => {
      router.service(TurnService, createTurnService({ runtime }));
      router.service(SessionService, createSessionService({ store }));
      router.service(AgentService, createAgentService(store));
    },
  });
  const turns = createClient(TurnService, server.transport);
  const sessions = createClient(SessionService, server.transport);
  const agents = createClient(AgentService, server.transport);
  async function say(sessionId: string, text: string): Promise<string> {
    let reply = "";
    for await (const r of turns.streamTurn({
      sessionId,
      input: [{ kind: { case: "text", value: text } }],
    })) {
      const e = r.event?.event;
      if (e?.case === "turnCompleted" && e.value.outcome?.kind.case === "finished") {
        reply = e.value.outcome.kind.value.value;
      }
    }
    return reply;
  }
  const userTextsOf = async (sessionId: string, atRevision = 0n) =>
    (await sessions.getSession({ sessionId, includeMessages: true, atRevision })).transcript
      .filter((m) => m.role === Role.USER)
      .map((m) => (m.parts[0]?.kind.case === "text" ? m.parts[0].kind.value : ""));
  return { turns, sessions, agents, say, userTextsOf };
}

for (const backend of ["memory", "redis"] as const) {
  describe(`fork and rewind on ${backend}`, () => {
    it("a rewind restores an earlier transcript as a new revision; the next turn sees only it", async () => {
      const { sessions, say, userTextsOf } = await setup(backend);
      const sessionId = `s-${randomUUID()}`;
      await say(sessionId, "one");
      await say(sessionId, "two");
      expect((await sessions.getSession({ sessionId })).session?.headRevision).toBe(3n);
      const rewound = await sessions.rewindSession({
        sessionId,
        toRevision: 2n,
        expectedHeadRevision: 3n,
      });
      expect(rewound.session).toMatchObject({ headRevision: 4n, turnIndex: 2n });
      expect(await userTextsOf(sessionId)).toEqual(["one"]);
      expect(await say(sessionId, "three")).toBe("saw one,three");
      // Nothing is lost: the rewound revision reads as it was.
      expect(await userTextsOf(sessionId, 3n)).toEqual(["one", "two"]);
      expect(await userTextsOf(sessionId, 4n)).toEqual(["one"]);
      expect(await userTextsOf(sessionId)).toEqual(["one", "three"]);
      // Without a head to compare, the rewind applies to the head as it is.
      await sessions.rewindSession({ sessionId, toRevision: 3n });
      expect(await say(sessionId, "four")).toBe("saw one,two,four");
    });

    it("a fork starts a new session at a revision, with the source's agent binding", async () => {
      const { agents, sessions, say, userTextsOf } = await setup(backend);
      const agentId = `a-${randomUUID()}`;
      await agents.createAgent({ agentId, definition: { model: "m1", systemPrompt: "hi" } });
      const sessionId = `s-${randomUUID()}`;
      await sessions.createSession({ sessionId, agentId });
      await say(sessionId, "one");
      await say(sessionId, "two");
      const before = await sessions.getSession({ sessionId, includeMessages: true });
      const forkId = `f-${randomUUID()}`;
      const forked = await sessions.forkSession({
        sessionId,
        atRevision: 2n,
        newSessionId: forkId,
      });
      expect(forked.session).toMatchObject({
        sessionId: forkId,
        headRevision: 2n,
        turnIndex: 1n,
        agent: { agentId, version: 1n },
      });
      expect(await userTextsOf(forkId)).toEqual(["one"]);
      // Edit and regenerate: the fork takes another second input.
      expect(await say(forkId, "deux")).toBe("saw one,deux");
      // The source is untouched (its lease may linger after its last turn: not compared).
      const after = await sessions.getSession({ sessionId, includeMessages: true });
      expect(after.transcript).toEqual(before.transcript);
      expect(after.session?.headRevision).toBe(before.session?.headRevision);
      // Forking at the head (at_revision 0) with a generated id.
      const head = await sessions.forkSession({ sessionId });
      expect(head.session?.sessionId).not.toBe("");
      expect(await userTextsOf(head.session?.sessionId ?? "")).toEqual(["one", "two"]);
    });

    it("bad requests get typed errors naming the field", async () => {
      const { turns, sessions, say } = await setup(backend);
      const sessionId = `s-${randomUUID()}`;
      await say(sessionId, "one");
      const refused = async (call: Promise<unknown>, code: Code) =>
        (await expectCode(call, code)).message;
      const newId = `f-${randomUUID()}`;
      expect(
        await refused(
          sessions.forkSession({ sessionId, atRevision: 9n, newSessionId: newId }),
          Code.OutOfRange,
        ),
      ).toMatch(/at_revision/u);
      expect(
        await refused(sessions.rewindSession({ sessionId, toRevision: 9n }), Code.OutOfRange),
      ).toMatch(/to_revision/u);
      expect(
        await refused(
          sessions.getSession({ sessionId, includeMessages: true, atRevision: 9n }),
          Code.OutOfRange,
        ),
      ).toMatch(/at_revision/u);
      expect(
        await refused(sessions.getSession({ sessionId, atRevision: 1n }), Code.InvalidArgument),
      ).toMatch(/at_revision/u);
      expect(
        await refused(sessions.rewindSession({ sessionId, toRevision: 0n }), Code.InvalidArgument),
      ).toMatch(/to_revision/u);
      await expectCode(
        sessions.rewindSession({ sessionId, toRevision: 1n, expectedHeadRevision: 1n }),
        Code.Aborted,
      );
      const other = `s-${randomUUID()}`;
      await say(other, "x");
      expect(
        await refused(sessions.forkSession({ sessionId, newSessionId: other }), Code.AlreadyExists),
      ).toContain(other);
      await expectCode(
        sessions.forkSession({ sessionId: `missing-${randomUUID()}`, newSessionId: newId }),
        Code.NotFound,
      );
      // A parked turn holds the session: no rewind until it ends.
      const parked = (async () => {
        for await (const r of turns.streamTurn({
          sessionId,
          input: [{ kind: { case: "text", value: "use it" } }],
          clientTools: [{ name: "it", description: "", parametersJsonSchema: "" }],
        })) {
          if (r.event?.event.case === "turnParked") return;
        }
      })();
      await parked;
      expect(
        (
          await expectCode(
            sessions.rewindSession({ sessionId, toRevision: 1n }),
            Code.FailedPrecondition,
          )
        ).message,
      ).toMatch(/in progress/u);
      await turns.cancelTurn({ sessionId });
      await waitFor(
        async () => (await sessions.getSession({ sessionId })).session?.headRevision === 3n,
        { what: "the cancelled turn's commit at revision 3" },
      );
      await sessions.rewindSession({ sessionId, toRevision: 2n });
    });
  });
}
