// SubmitToolResults decided by the store: two replicas on one Redis (and one on memory) answer the
// same client call at once; exactly one answer is accepted and used, every other one and every
// answer after the turn or for a call the turn never asked is reported ignored.
import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createTurnService } from "../../../src/api/turn-service.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
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
        let reports: { acceptedCallIds: string[]; ignoredCallIds: string[] }[] = [];
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
          // Two answers per replica at once, each with its own output; plus an unknown call id.
          reports = await Promise.all(
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
          const unknown = await replicas.at(-1)!.client.submitToolResults({
            sessionId,
            turnId,
            results: [{ callId: "never-asked", output: "x", isError: false }],
          });
          expect(unknown).toMatchObject({ acceptedCallIds: [], ignoredCallIds: ["never-asked"] });
        }
        const accepted = reports.flatMap((r) => r.acceptedCallIds);
        expect(accepted).toEqual(["call-1"]);
        expect(reports.flatMap((r) => r.ignoredCallIds)).toHaveLength(reports.length - 1);
        // The accepted answer is the one the turn used.
        const winner = reports.findIndex((r) => r.acceptedCallIds.length === 1);
        const replicaIndex = Math.floor(winner / 2);
        const text = events
          .map((e) => (e.event.case === "textDelta" ? e.event.value.text : ""))
          .join("");
        expect(text).toBe(`tool said answer-${replicaIndex}-${winner % 2}`);
        expect(events.at(-1)?.event.case).toBe("turnCompleted");

        // After the turn: still ignored (not accepted, not an error), on every replica.
        for (const rep of replicas) {
          expect(
            await rep.client.submitToolResults({
              sessionId,
              turnId,
              results: [{ callId: "call-1", output: "late", isError: false }],
            }),
          ).toMatchObject({ acceptedCallIds: [], ignoredCallIds: ["call-1"] });
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
  });
}
