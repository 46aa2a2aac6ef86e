// Agents between tether.v1 messages and the domain: a definition is checked field by field and
// decoded once, here, into domain/agents.ts's AgentDefinition, which the store keeps encoded.
import { create } from "@bufbuild/protobuf";
import {
  decodeAgentDefinition,
  encodeAgentDefinition,
  type AgentDefinition,
  type AgentVersion,
} from "../../domain/agents.js";
import { invalidArgument, isTetherError } from "../../domain/errors.js";
import {
  AgentDefinitionSchema,
  AgentSchema,
  type Agent as AgentPb,
  type AgentDefinition as AgentDefinitionPb,
} from "../../gen/tether/v1/agent_service_pb.js";
import { TurnOptionsSchema } from "../../gen/tether/v1/turn_pb.js";
import { budgetToProto } from "./budgets.js";
import { contextManagementToProto } from "./context.js";
import { fromInt64, fromUint64, type SessionIdMap } from "./scalars.js";
import { clientToolsFromProto, settingsFromProto } from "./turn.js";

/** Checks and decodes a definition; a refused field is named under `definition.`. */
export function definitionFromProto(pb: AgentDefinitionPb | undefined): AgentDefinition {
  const definition = pb ?? create(AgentDefinitionSchema);
  try {
    const clientTools = clientToolsFromProto(definition.clientTools);
    const settings = settingsFromProto(
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
        ...(definition.budget && { budget: definition.budget }),
        ...(definition.contextManagement && {
          contextManagement: definition.contextManagement,
        }),
      }),
    );
    return { ...settings, clientTools };
  } catch (error) {
    if (isTetherError(error, "invalid_argument")) {
      const [v] = error.violations;
      if (v) {
        throw invalidArgument(`definition.${v.field.replace(/^options\./u, "")}`, v.description);
      }
    }
    throw error;
  }
}

/** A request's definition as the store keeps it. */
export const definitionToStore = (pb: AgentDefinitionPb | undefined): string =>
  encodeAgentDefinition(definitionFromProto(pb));

export function definitionToProto(d: AgentDefinition): AgentDefinitionPb {
  return create(AgentDefinitionSchema, {
    model: d.model ?? "",
    systemPrompt: d.systemPrompt ?? "",
    ...(d.temperature !== undefined && { temperature: d.temperature }),
    maxOutputTokens: d.maxOutputTokens ?? 0,
    maxIterations: d.maxIterations ?? 0,
    tokenBudget: BigInt(d.maxTurnTokens ?? 0),
    clientTools: d.clientTools.map((t) => ({
      name: t.name,
      description: t.description,
      parametersJsonSchema: JSON.stringify(t.inputSchema),
      requiresApproval: t.requiresApproval === true,
    })),
    serverTools: d.serverTools ?? [],
    approvalRequiredTools: d.approvalRequiredTools ?? [],
    ...(d.responseFormat && {
      responseFormat: {
        name: d.responseFormat.name,
        jsonSchema: JSON.stringify(d.responseFormat.schema),
      },
    }),
    ...(d.budget && { budget: budgetToProto(d.budget) }),
    ...(d.contextManagement && {
      contextManagement: contextManagementToProto(d.contextManagement),
    }),
  });
}

/** A stored definition (either encoding the store holds) as the wire shows it. */
export const storedDefinitionToProto = (json: string): AgentDefinitionPb =>
  definitionToProto(decodeAgentDefinition(json));

export function agentToProto(agent: AgentVersion, ids: SessionIdMap): AgentPb {
  return create(AgentSchema, {
    agentId: ids.toClient(agent.agentId),
    version: BigInt(agent.version),
    displayName: agent.displayName,
    definition: storedDefinitionToProto(agent.definition),
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
    definition: definitionToStore(pb.definition),
    createdAtMs: fromInt64(pb.createdAtMs, "agent.created_at_ms"),
  };
}
