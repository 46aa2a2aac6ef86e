// UpdateSessionMetadata and UpdateSession without expected_head_revision (0: no compare-and-set)
// apply however many run at once on one session: each retries its own lost races, so every change
// lands, while an update that names a stale revision is still refused ABORTED. On memory (one
// replica) and on Redis (two replicas of one deployment, each with its own connection).
import { randomUUID } from "node:crypto";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { createAgentService } from "../../../src/api/agent-service.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { headRevisionConflict } from "../../../src/domain/errors.js";
import { ErrorInfoSchema } from "../../../src/gen/google/rpc/error_details_pb.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import { createRedisStore } from "../../../src/store/redis/index.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";

const redisUrl = inject("redisUrl");
const connections: Redis[] = [];
afterAll(() => connections.forEach((c) => c.disconnect()));

const UPDATES = 12;

interface Replica {
  sessions: Client<typeof SessionService>;
  agents: Client<typeof AgentService>;
}

for (const backend of ["memory", "redis"] as const) {
  describe(`updates without a compare-and-set on ${backend}`, () => {
    const servers: ApiServerHarness[] = [];
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((s) => s.close()));
    });

    async function serve(store: RuntimeStore): Promise<Replica> {
      const server = await startApiServer({
        routes: (router) => {
          router.service(SessionService, createSessionService({ store }));
          router.service(AgentService, createAgentService(store));
        },
      });
      servers.push(server);
      return {
        sessions: createClient(SessionService, server.transport),
        agents: createClient(AgentService, server.transport),
      };
    }

    /** The deployment's replicas: one on memory, two on Redis sharing one namespace. */
    async function replicas(wrap: (store: RuntimeStore) => RuntimeStore = (s) => s) {
      if (backend === "memory") return [await serve(wrap(createMemoryStore()))];
      const namespace = `updates-${randomUUID()}`;
      return Promise.all(
        [0, 1].map(() => {
          const redis = new Redis(redisUrl);
          connections.push(redis);
          return serve(wrap(createRedisStore({ redis, namespace })));
        }),
      );
    }

    it("12 concurrent UpdateSessionMetadata calls all succeed and every key lands", async () => {
      const all = await replicas();
      const sessionId = `s-${randomUUID()}`;
      await all[0]!.sessions.createSession({ sessionId, metadata: { base: "0" } });

      const results = await Promise.allSettled(
        Array.from({ length: UPDATES }, (_, i) =>
          all[i % all.length]!.sessions.updateSessionMetadata({
            sessionId,
            metadata: { [`key-${i}`]: `value-${i}` },
          }),
        ),
      );
      expect(results.filter((r) => r.status === "rejected")).toEqual([]);

      const { session } = await all[0]!.sessions.getSession({ sessionId });
      const expected: Record<string, string> = { base: "0" };
      for (let i = 0; i < UPDATES; i++) expected[`key-${i}`] = `value-${i}`;
      expect(session?.metadata).toEqual(expected);
      // Created at 1, then one commit per update.
      expect(session?.headRevision).toBe(13n);
    });

    it("12 concurrent UpdateSession calls all succeed, each one commit", async () => {
      const all = await replicas();
      const agentId = `agent-${randomUUID()}`;
      await all[0]!.agents.createAgent({ agentId, definition: { model: "m-1" } });
      const sessionId = `s-${randomUUID()}`;
      await all[0]!.sessions.createSession({ sessionId });

      const results = await Promise.allSettled(
        Array.from({ length: UPDATES }, (_, i) =>
          all[i % all.length]!.sessions.updateSession({ sessionId, agentId, agentVersion: 1n }),
        ),
      );
      expect(results.filter((r) => r.status === "rejected")).toEqual([]);

      const { session } = await all[0]!.sessions.getSession({ sessionId });
      expect(session?.headRevision).toBe(13n);
      expect(session?.agent).toMatchObject({ agentId, version: 1n });
    });

    it("an update naming a stale expected_head_revision is ABORTED and changes nothing", async () => {
      const [replica] = await replicas();
      const sessionId = `s-${randomUUID()}`;
      await replica!.sessions.createSession({ sessionId });
      await replica!.sessions.updateSessionMetadata({ sessionId, metadata: { a: "1" } });

      await expectCode(
        replica!.sessions.updateSessionMetadata({
          sessionId,
          expectedHeadRevision: 1n,
          metadata: { b: "2" },
        }),
        Code.Aborted,
      );
      await expectCode(
        replica!.sessions.updateSession({ sessionId, expectedHeadRevision: 1n }),
        Code.Aborted,
      );
      const { session } = await replica!.sessions.getSession({ sessionId });
      expect(session?.metadata).toEqual({ a: "1" });
      expect(session?.headRevision).toBe(2n);
    });

    it("an update whose every attempt loses its race gives up UNAVAILABLE, saying so", async () => {
      // Every commit loses to a commit that lands just before it.
      const [replica] = await replicas((store) => ({
        ...store,
        commit: (commit) =>
          commit.expectedHeadRevision === 0
            ? store.commit(commit)
            : Promise.reject(
                headRevisionConflict(
                  commit.sessionId,
                  commit.expectedHeadRevision,
                  commit.expectedHeadRevision + 1,
                ),
              ),
      }));
      const sessionId = `s-${randomUUID()}`;
      await replica!.sessions.createSession({ sessionId });

      const error = await expectCode(
        replica!.sessions.updateSessionMetadata({ sessionId, metadata: { a: "1" } }),
        Code.Unavailable,
      );
      expect(error.findDetails(ErrorInfoSchema).map((d) => d.reason)).toEqual([
        "HEAD_REVISION_CONTENDED",
      ]);
      expect(error.rawMessage).toMatch(/concurrent commits/u);
      expect(error.rawMessage).toContain(sessionId);
      expect(error.rawMessage).not.toContain("default:");
      const { session } = await replica!.sessions.getSession({ sessionId });
      expect(session?.metadata).toEqual({});
      expect(session?.headRevision).toBe(1n);
    });
  });
}
