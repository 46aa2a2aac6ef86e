// AgentService over the store: agents as versioned, tenant-scoped data (domain/agents.ts). The
// store decides every rule (versions, compare-and-set, deletes); this layer checks definitions and
// scopes ids to the caller's tenant.
import type { ServiceImpl } from "@connectrpc/connect";
import { invalidArgument } from "../domain/errors.js";
import { agentNotFound } from "../domain/resource-errors.js";
import type { AgentService } from "../gen/tether/v1/agent_service_pb.js";
import type { AgentStore } from "../ports/runtime-store.js";
import { agentToProto, definitionToStore } from "./convert/agents.js";
import { decodePageToken, encodePageToken } from "./convert/page-token.js";
import { pageSizeOf } from "./page-size.js";
import { fromUint64 } from "./convert/scalars.js";
import { scopeOf } from "./tenancy.js";

const MAX_DISPLAY_NAME = 200;

function displayName(raw: string): string {
  if (raw.length > MAX_DISPLAY_NAME) {
    throw invalidArgument("display_name", `must be at most ${MAX_DISPLAY_NAME} characters`);
  }
  return raw;
}

export function createAgentService(store: AgentStore): ServiceImpl<typeof AgentService> {
  return {
    async createAgent(req, ctx) {
      const scope = scopeOf(ctx.values);
      const agent = await store.createAgent({
        agentId: scope.toStore(req.agentId, "agent_id"),
        displayName: displayName(req.displayName),
        definition: definitionToStore(req.definition),
      });
      return { agent: agentToProto(agent, scope) };
    },

    async getAgent(req, ctx) {
      const scope = scopeOf(ctx.values);
      const agentId = scope.toStore(req.agentId, "agent_id");
      const version = req.version === 0n ? undefined : fromUint64(req.version, "version");
      const agent = await store.getAgent(agentId, version);
      if (!agent) throw agentNotFound(req.agentId, version);
      return { agent: agentToProto(agent, scope) };
    },

    async listAgents(req, ctx) {
      const scope = scopeOf(ctx.values);
      const limit = pageSizeOf("ListAgents", req.pageSize);
      const after = decodePageToken(req.pageToken);
      const page = await store.listAgents({
        prefix: scope.prefix,
        ...(after !== undefined && { cursor: scope.toStore(after, "page_token") }),
        limit,
      });
      return {
        agents: page.agents.map((a) => agentToProto(a, scope)),
        nextPageToken:
          page.nextCursor === undefined ? "" : encodePageToken(scope.toClient(page.nextCursor)),
      };
    },

    async updateAgent(req, ctx) {
      const scope = scopeOf(ctx.values);
      if (req.expectedVersion === 0n) {
        throw invalidArgument("expected_version", "must name the version the update is based on");
      }
      const agent = await store.updateAgent({
        agentId: scope.toStore(req.agentId, "agent_id"),
        expectedVersion: fromUint64(req.expectedVersion, "expected_version"),
        displayName: displayName(req.displayName),
        definition: definitionToStore(req.definition),
      });
      return { agent: agentToProto(agent, scope) };
    },

    async deleteAgent(req, ctx) {
      const scope = scopeOf(ctx.values);
      return { deleted: await store.deleteAgent(scope.toStore(req.agentId, "agent_id")) };
    },
  };
}
