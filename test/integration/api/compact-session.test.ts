// CompactSession through SessionService: it commits a ROLE_COMPACTION message as its own
// revision (the originals stay), is announced to WatchSession watchers as context_compacted, is
// refused FAILED_PRECONDITION while a turn is parked, and NOT_FOUND for a session that does not
// exist.
import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { CompactionMode } from "../../../src/gen/tether/v1/context_pb.js";
import { TranscriptMessage_Role as Role } from "../../../src/gen/tether/v1/transcript_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

let server: ApiServerHarness | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SUMMARIZER = "You write summaries of conversations.";

/** Summary calls get "SUMMARY"; "use it" asks for the client tool `it`; anything else "ok". */
const provider = () =>
  createScriptedProvider({
    script: (request) => {
      const first = request.messages[0];
      if (first?.role === "system" && first.text === SUMMARIZER) {
        return { response: { parts: [{ type: "text", text: "SUMMARY" }] } };
      }
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
      return { response: { parts: [{ type: "text", text: "ok" }] } };
    },
  });

async function setup() {
  const { runtime, store } = createRuntimeHarness({ provider: provider(), parkAfterMs: 0 });
  server = await startApiServer({
    routes: (router) => {
      router.service(TurnService, createTurnService({ runtime }));
      router.service(
        SessionService,
        createSessionService({ store, compact: (id, i) => runtime.compactSession(id, i) }),
      );
    },
  });
  const turns = createClient(TurnService, server.transport);
  const sessions = createClient(SessionService, server.transport);
  async function say(sessionId: string, text: string): Promise<void> {
    for await (const r of turns.streamTurn({
      sessionId,
      input: [{ kind: { case: "text", value: text } }],
    })) {
      void r;
    }
  }
  return { turns, sessions, say };
}

describe("CompactSession", () => {
  it("commits a compaction as its own revision; the transcript keeps every original", async () => {
    const { sessions, say } = await setup();
    const sessionId = `s-${randomUUID()}`;
    // Four inputs of 12,000 characters: about 12,000 tokens, over the 8,000 kept by default.
    for (let i = 0; i < 4; i++) await say(sessionId, `${i} `.padEnd(12_000, "x"));
    const response = await sessions.compactSession({ sessionId, instructions: "Be short." });
    expect(response.compacted).toBe(true);
    expect(response.session?.headRevision).toBe(6n);
    expect(response.compaction?.summary).toBe("SUMMARY");
    // The kept tail (8,000 tokens by default) holds the last two inputs: it starts at answer 2.
    expect(response.compaction?.coversThroughMessage).toBe(3n);
    const page = await sessions.listMessages({ sessionId });
    expect(page.messages.map((m) => m.role)).toEqual([
      ...Array.from({ length: 4 }, () => [Role.USER, Role.ASSISTANT]).flat(),
      Role.COMPACTION,
    ]);
  });

  it("is announced to a WatchSession watcher as context_compacted, after the turns' events", async () => {
    const { turns, sessions, say } = await setup();
    const sessionId = `s-${randomUUID()}`;
    for (let i = 0; i < 4; i++) await say(sessionId, `${i} `.padEnd(12_000, "x"));
    // A watcher attached before the compaction, live: it reads the four turns, then waits.
    const abort = new AbortController();
    const bound = setTimeout(() => abort.abort(), 10_000);
    let lastTurnCursor = 0n;
    const seen: { turnId: string; cursor: bigint; value: unknown }[] = [];
    const watching = (async () => {
      try {
        for await (const r of turns.watchSession(
          { sessionId, afterCursor: 0n },
          { signal: abort.signal },
        )) {
          const e = r.event;
          if (e?.event.case === "turnCompleted") lastTurnCursor = e.cursor;
          if (e?.event.case !== "contextCompacted") continue;
          seen.push({ turnId: e.turnId, cursor: e.cursor, value: e.event.value });
          abort.abort();
        }
      } catch {
        // aborted: the announcement arrived, or the bound passed
      }
    })();
    await waitFor(() => lastTurnCursor > 0n, { what: "the watcher to read the turns" });
    const response = await sessions.compactSession({ sessionId });
    expect(response.compacted).toBe(true);
    await watching;
    clearTimeout(bound);
    expect(seen.length).toBe(1);
    // No turn ran: the event carries no turn id, and follows the last turn's events.
    expect(seen[0]?.turnId).toBe("");
    expect(seen[0]?.cursor).toBeGreaterThan(lastTurnCursor);
    expect(seen[0]?.value).toMatchObject({
      coversThroughMessage: 3n,
      mode: CompactionMode.SUMMARIZE,
      clearedToolResults: 0,
    });
    const { tokensBefore, tokensAfter } = seen[0]?.value as {
      tokensBefore: bigint;
      tokensAfter: bigint;
    };
    expect(tokensBefore).toBeGreaterThan(12_000n);
    expect(tokensAfter).toBeLessThan(tokensBefore);
    // The lease was given back after the announcement: the next turn runs at once.
    await say(sessionId, "after");
    expect((await sessions.getSession({ sessionId })).session?.headRevision).toBe(7n);
  });

  it("is refused FAILED_PRECONDITION while a turn is parked, NOT_FOUND for no session", async () => {
    const { turns, sessions, say } = await setup();
    const sessionId = `s-${randomUUID()}`;
    await say(sessionId, "hello");
    for await (const r of turns.streamTurn({
      sessionId,
      input: [{ kind: { case: "text", value: "use it" } }],
      clientTools: [{ name: "it", description: "", parametersJsonSchema: "" }],
    })) {
      if (r.event?.event.case === "turnParked") break;
    }
    const refused = await expectCode(
      sessions.compactSession({ sessionId }),
      Code.FailedPrecondition,
    );
    expect(refused.message).toMatch(/in progress \(parked\)/u);
    await expectCode(
      sessions.compactSession({ sessionId: `missing-${randomUUID()}` }),
      Code.NotFound,
    );
  });
});
