// SubmitToolResults decided by the store: two replicas on one Redis (and one on memory) answer the
// same client call at once; exactly one answer is accepted and used, every other one and an answer
// for a call the turn never asked is reported ignored. Answers (results or approval decisions) to
// a turn that has completed are FAILED_PRECONDITION naming the turn.
import { randomUUID } from "node:crypto";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createTurnService } from "../../../src/api/turn-service.js";
import {
  TurnService,
  type SubmitToolResultsResponse,
} from "../../../src/gen/tether/v1/turn_service_pb.js";
import type { TurnEvent } from "../../../src/gen/tether/v1/turn_pb.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { expectCode } from "../../support/api-clients.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { TurnService as TurnServiceDesc } from "../../../src/gen/tether/v1/turn_service_pb.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

/** Asks the client for `client_lookup`, then says what the tool answered. */
function toolAskingProvider(): ModelProvider {
  return createScriptedProvider({
    script: (request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") {
        return {
          events: [{ type: "text_delta", text: `tool said ${last.content}` }],
          response: {},
        };
      }
      return {
        response: {
          parts: [
            { type: "tool_call", callId: "call-1", toolName: "client_lookup", argumentsJson: "{}" },
          ],
        },
      };
    },
  });
}

const clientTool = {
  name: "client_lookup",
  description: "answered by the client",
  parametersJsonSchema: '{"type":"object"}',
};
const input = [{ kind: { case: "text" as const, value: "look it up" } }];

async function replica(redisConnection: Redis | undefined, namespace: string) {
  const { runtime } = createRuntimeHarness({
    provider: toolAskingProvider(),
    clientToolTimeoutMs: 20_000,
    namespace,
    ...(redisConnection ? { redis: redisConnection } : {}),
  });
  const server: ApiServerHarness = await startApiServer({
    routes: (router) => router.service(TurnServiceDesc, createTurnService({ runtime })),
  });
  return { client: createClient(TurnService, server.transport), close: server.close };
}

for (const backend of ["memory", "redis"] as const) {
  describe(`SubmitToolResults on ${backend}`, () => {
    it("concurrent duplicate answers through every replica: exactly one accepted, and it is the one used", async () => {
      const namespace = `answers-${randomUUID()}`;
      const connection = backend === "redis" ? redis : undefined;
      // Memory is one process: one replica. Redis: two replicas of one deployment.
      const replicas = [await replica(connection, namespace)];
      if (backend === "redis") replicas.push(await replica(connection, namespace));
      const [a] = replicas;
      try {
        const sessionId = `s-${randomUUID()}`;
        const events: TurnEvent[] = [];
        let turnId = "";
        let settled: PromiseSettledResult<SubmitToolResultsResponse>[] = [];
        for await (const r of a!.client.streamTurn({
          sessionId,
          input,
          clientTools: [clientTool],
        })) {
          if (!r.event) continue;
          events.push(r.event);
          if (r.event.event.case !== "toolCallRequested") continue;
          turnId = r.event.turnId;
          const callId = r.event.event.value.callId;
          // While the turn waits: a call id it never asked for is ignored.
          const unknown = await replicas.at(-1)!.client.submitToolResults({
            sessionId,
            turnId,
            results: [{ callId: "never-asked", output: "x", isError: false }],
          });
          expect(unknown).toMatchObject({ acceptedCallIds: [], ignoredCallIds: ["never-asked"] });
          // Two answers per replica at once, each with its own output.
          settled = await Promise.allSettled(
            replicas.flatMap((rep, i) =>
              [0, 1].map((j) =>
                rep.client.submitToolResults({
                  sessionId,
                  turnId,
                  results: [{ callId, output: `answer-${i}-${j}`, isError: false }],
                }),
              ),
            ),
          );
        }
        const reports = settled.map((r) => (r.status === "fulfilled" ? r.value : undefined));
        expect(reports.flatMap((r) => r?.acceptedCallIds ?? [])).toEqual(["call-1"]);
        const winner = reports.findIndex((r) => r?.acceptedCallIds.length === 1);
        // Every other answer is ignored, or refused naming the turn when the accepted one had
        // already let the turn complete.
        settled.forEach((r, i) => {
          if (i === winner) return;
          if (r.status === "fulfilled") expect(r.value.ignoredCallIds).toEqual(["call-1"]);
          else {
            expect(r.reason).toBeInstanceOf(ConnectError);
            expect(Code[(r.reason as ConnectError).code]).toBe("FailedPrecondition");
            expect((r.reason as ConnectError).rawMessage).toContain(turnId);
          }
        });
        // The accepted answer is the one the turn used.
        const replicaIndex = Math.floor(winner / 2);
        const text = events
          .map((e) => (e.event.case === "textDelta" ? e.event.value.text : ""))
          .join("");
        expect(text).toBe(`tool said answer-${replicaIndex}-${winner % 2}`);
        expect(events.at(-1)?.event.case).toBe("turnCompleted");

        // After the turn: refused naming the turn (it is neither running nor parked), everywhere.
        for (const rep of replicas) {
          const late = await expectCode(
            rep.client.submitToolResults({
              sessionId,
              turnId,
              results: [{ callId: "call-1", output: "late", isError: false }],
            }),
            Code.FailedPrecondition,
          );
          expect(late.rawMessage).toContain(turnId);
        }
        // A turn that never waited for a client is FAILED_PRECONDITION naming the turn.
        await expectCode(
          a!.client.submitToolResults({
            sessionId,
            turnId: "turn-never-ran",
            results: [{ callId: "call-1", output: "x", isError: false }],
          }),
          Code.FailedPrecondition,
        );
      } finally {
        await Promise.all(replicas.map((r) => r.close()));
      }
    });

    it("answers to a completed turn are FAILED_PRECONDITION naming the turn, before any call is judged", async () => {
      const namespace = `answers-${randomUUID()}`;
      const rep = await replica(backend === "redis" ? redis : undefined, namespace);
      try {
        const sessionId = `s-${randomUUID()}`;
        // One turn whose call waited for an approval, then for its result; one whose call did not.
        const approved = await runAnswering(rep.client, sessionId, true);
        const plain = await runAnswering(rep.client, sessionId, false);
        for (const turnId of [approved, plain]) {
          const results = await expectCode(
            rep.client.submitToolResults({
              sessionId,
              turnId,
              results: [{ callId: "call-1", output: "late", isError: false }],
            }),
            Code.FailedPrecondition,
          );
          expect(results.rawMessage).toContain(turnId);
          // Not INVALID_ARGUMENT "needs no approval" for the plain call, nor ignored for the other.
          const decisions = await expectCode(
            rep.client.decideToolCalls({
              sessionId,
              turnId,
              decisions: [{ callId: "call-1", approve: true, reason: "late" }],
            }),
            Code.FailedPrecondition,
          );
          expect(decisions.rawMessage).toContain(turnId);
        }
      } finally {
        await rep.close();
      }
    });
  });
}

/**
 * Runs one turn of the tool-asking model to its end, answering what it waits for: the approval of
 * `client_lookup` first when it needs one, then its result. Returns the turn id.
 */
async function runAnswering(
  client: Client<typeof TurnService>,
  sessionId: string,
  withApproval: boolean,
): Promise<string> {
  let turnId = "";
  let completed = false;
  for await (const r of client.streamTurn({
    sessionId,
    input,
    clientTools: [{ ...clientTool, requiresApproval: withApproval }],
  })) {
    const event = r.event;
    if (!event) continue;
    turnId = event.turnId;
    if (event.event.case === "toolApprovalRequested") {
      const decided = await client.decideToolCalls({
        sessionId,
        turnId,
        decisions: [{ callId: "call-1", approve: true, reason: "ok" }],
      });
      expect(decided.acceptedCallIds).toEqual(["call-1"]);
    } else if (event.event.case === "toolCallRequested") {
      const answered = await client.submitToolResults({
        sessionId,
        turnId,
        results: [{ callId: "call-1", output: "42", isError: false }],
      });
      expect(answered.acceptedCallIds).toEqual(["call-1"]);
    } else if (event.event.case === "turnCompleted") {
      completed = true;
    }
  }
  expect(completed).toBe(true);
  return turnId;
}
