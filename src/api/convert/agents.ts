// Agents between tether.v1 messages and the store: a definition is checked field by field once,
// here, and kept as its canonical JSON (protojson), which runtime/turn/agent-definition.ts reads.
import { create, fromJsonString, toJsonString } from "@bufbuild/protobuf";
import type { AgentVersion } from "../../domain/agents.js";
import { invalidArgument, isTetherError } from "../../domain/errors.js";
import {
  AgentDefinitionSchema,
  AgentSchema,
  type Agent as AgentPb,
  type AgentDefinition,
} from "../../gen/tether/v1/agent_service_pb.js";
import { TurnOptionsSchema } from "../../gen/tether/v1/turn_pb.js";
import { fromInt64, fromUint64, type SessionIdMap } from "./scalars.js";
import { clientToolsFromProto, settingsFromProto } from "./turn.js";

/** Checks a definition; a refused field is named under `definition.`. */
export function definitionToStore(pb: AgentDefinition | undefined): string {
  const definition = pb ?? create(AgentDefinitionSchema);
  try {
    clientToolsFromProto(definition.clientTools);
    settingsFromProto(
      create(TurnOptionsSchema, {
        model: definition.model,
        systemPrompt: definition.systemPrompt,
        ...(definition.temperature !== undefined && { temperature: definition.temperature }),
        maxOutputTokens: definition.maxOutputTokens,
        maxIterations: definition.maxIterations,
        tokenBudget: definition.tokenBudget,
        serverTools: definition.serverTools,
        approvalRequiredTools: definition.approvalRequiredTools,
        ...(definition.responseFormat && { responseFormat: definition.responseFormat }),
      }),
    );
  } catch (error) {
    if (isTetherError(error, "invalid_argument")) {
      const [v] = error.violations;
      if (v) {
        throw invalidArgument(`definition.${v.field.replace(/^options\./u, "")}`, v.description);
      }
    }
    throw error;
  }
  return toJsonString(AgentDefinitionSchema, definition);
}

export function agentToProto(agent: AgentVersion, ids: SessionIdMap): AgentPb {
  return create(AgentSchema, {
    agentId: ids.toClient(agent.agentId),
    version: BigInt(agent.version),
    displayName: agent.displayName,
    definition: fromJsonString(AgentDefinitionSchema, agent.definition),
    createdAtMs: BigInt(agent.createdAtMs),
  });
}

/** The wire client's view of a stored version (the conformance suite's wire backend). */
export function agentFromProto(pb: AgentPb | undefined, ids: SessionIdMap): AgentVersion {
  if (pb === undefined) throw invalidArgument("agent", "is missing");
  return {
    agentId: ids.toStore(pb.agentId, "agent.agent_id"),
    version: fromUint64(pb.version, "agent.version"),
    displayName: pb.displayName,
    definition: toJsonString(AgentDefinitionSchema, pb.definition ?? create(AgentDefinitionSchema)),
    createdAtMs: fromInt64(pb.createdAtMs, "agent.created_at_ms"),
  };
}

export const definitionFromStore = (json: string): AgentDefinition =>
  fromJsonString(AgentDefinitionSchema, json);
