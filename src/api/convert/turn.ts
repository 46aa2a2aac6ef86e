// Turns between tether.v1 messages and the runtime: StreamTurn requests in, outcomes out (the
// events around them are session-events.ts).
import { create } from "@bufbuild/protobuf";
import {
  IMAGE_MEDIA_TYPES,
  validateInputItems,
  invalidTurnInput,
  type ImageMediaType,
  type InputItem,
  type JsonValue,
} from "../../domain/conversation.js";
import { invalidArgument } from "../../domain/errors.js";
import type { TurnOutcome } from "../../domain/turn-outcome.js";
import type { TurnSettings } from "../../domain/turn-settings.js";
import {
  BusyStrategy as BusyStrategyPb,
  FailureReason,
  FinishReason,
  StopReason,
  TurnOutcomeSchema,
  type InputPart,
  type ToolDefinition as ToolDefinitionPb,
  type TurnOptions,
  type TurnOutcome as TurnOutcomePb,
} from "../../gen/tether/v1/turn_pb.js";
import type { ToolDefinition } from "../../ports/tool-executor.js";
import { parseUserSchema } from "../../runtime/index.js";
import type { BusyStrategy } from "../../runtime/index.js";
import { budgetFromProto, budgetStopMessage } from "./budgets.js";
import { createEnumTable, fromUint64 } from "./scalars.js";
import { contextManagementFromProto } from "./context.js";
import { responseFormatFromProto } from "./response-format.js";

const MAX_TOOLS = 128;

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/u;

const busyStrategies = createEnumTable<BusyStrategyPb, BusyStrategy>([
  [BusyStrategyPb.ENQUEUE, "enqueue"],
  [BusyStrategyPb.STEER, "steer"],
  [BusyStrategyPb.REJECT, "reject"],
  [BusyStrategyPb.INTERRUPT, "interrupt"],
]);

export function busyStrategyFromProto(value: BusyStrategyPb): BusyStrategy {
  return value === BusyStrategyPb.UNSPECIFIED
    ? "enqueue"
    : busyStrategies.fromProto(value, "busy_strategy");
}

export function inputFromProto(parts: readonly InputPart[]): InputItem[] {
  const items = parts.map((part, i): InputItem => {
    const field = `input[${i}]`;
    switch (part.kind.case) {
      case "text":
        return { type: "text", text: part.kind.value };
      case "image": {
        const image = part.kind.value;
        if (image.source.case === "data") {
          if (!IMAGE_MEDIA_TYPES.includes(image.mimeType as ImageMediaType)) {
            throw invalidArgument(
              `${field}.image.mime_type`,
              `must be one of ${IMAGE_MEDIA_TYPES.join(", ")}`,
            );
          }
          return {
            type: "image",
            image: {
              kind: "inline",
              mediaType: image.mimeType as ImageMediaType,
              data: image.source.value,
            },
          };
        }
        if (image.source.case === "url")
          return { type: "image", image: { kind: "url", url: image.source.value } };
        throw invalidArgument(`${field}.image`, "needs data or url");
      }
      default:
        throw invalidArgument(field, "needs text or image");
    }
  });
  const violations = validateInputItems(items);
  if (violations.length > 0) {
    throw invalidTurnInput(
      violations.map((v) => ({ ...v, field: v.field.replace(/^items/u, "input") })),
    );
  }
  return items;
}

export function clientToolsFromProto(tools: readonly ToolDefinitionPb[]): ToolDefinition[] {
  if (tools.length > MAX_TOOLS)
    throw invalidArgument("client_tools", `must hold at most ${MAX_TOOLS} tools`);
  const names = new Set<string>();
  return tools.map((tool, i) => {
    const field = `client_tools[${i}]`;
    if (!TOOL_NAME.test(tool.name)) {
      throw invalidArgument(
        `${field}.name`,
        "must be 1-64 characters of letters, digits, '_' or '-'",
      );
    }
    if (names.has(tool.name)) throw invalidArgument(`${field}.name`, `duplicates ${tool.name}`);
    names.add(tool.name);
    // Bounded like every user schema, so nothing downstream (the store's JSON, the provider's
    // request) recurses past the stack. Not compiled: Tether never validates by it, the model does.
    const schema: { [key: string]: JsonValue } =
      tool.parametersJsonSchema === ""
        ? { type: "object" }
        : parseUserSchema(tool.parametersJsonSchema, `${field}.parameters_json_schema`);
    return {
      name: tool.name,
      description: tool.description,
      inputSchema: schema,
      ...(tool.requiresApproval && { requiresApproval: true }),
    };
  });
}

export function settingsFromProto(options: TurnOptions | undefined): TurnSettings {
  if (!options) return {};
  const settings: TurnSettings = {};
  if (options.model !== "") settings.model = options.model;
  if (options.temperature !== undefined) {
    if (!(options.temperature >= 0 && options.temperature <= 2)) {
      throw invalidArgument("options.temperature", "must be between 0 and 2");
    }
    settings.temperature = options.temperature;
  }
  if (options.maxOutputTokens > 0) settings.maxOutputTokens = options.maxOutputTokens;
  if (options.maxIterations > 0) {
    if (options.maxIterations > 100)
      throw invalidArgument("options.max_iterations", "must be at most 100");
    settings.maxIterations = options.maxIterations;
  }
  if (options.tokenBudget > 0n)
    settings.maxTurnTokens = fromUint64(options.tokenBudget, "options.token_budget");
  if (options.systemPrompt !== "") settings.systemPrompt = options.systemPrompt;
  const budget = budgetFromProto(options.budget, "options.budget");
  if (budget) settings.budget = budget;
  const approvals = toolNames("options.approval_required_tools", options.approvalRequiredTools);
  if (approvals.length > 0) settings.approvalRequiredTools = approvals;
  const serverTools = toolNames("options.server_tools", options.serverTools);
  if (serverTools.length > 0) settings.serverTools = serverTools;
  if (options.responseFormat)
    settings.responseFormat = responseFormatFromProto(options.responseFormat);
  if (options.contextManagement) {
    settings.contextManagement = contextManagementFromProto(
      options.contextManagement,
      "options.context_management",
    );
  }
  return settings;
}

/** A list of tool (or tool server) names, each checked, duplicates dropped. */
function toolNames(field: string, names: readonly string[]): string[] {
  if (names.length > MAX_TOOLS)
    throw invalidArgument(field, `must hold at most ${MAX_TOOLS} names`);
  names.forEach((name, i) => {
    if (!TOOL_NAME.test(name)) {
      throw invalidArgument(
        `${field}[${i}]`,
        "must be 1-64 characters of letters, digits, '_' or '-'",
      );
    }
  });
  return [...new Set(names)];
}

export function outcomeToProto(outcome: TurnOutcome): TurnOutcomePb {
  switch (outcome.kind) {
    case "finished":
      return create(TurnOutcomeSchema, {
        kind: {
          case: "finished",
          value:
            outcome.reason === "assistant_message"
              ? {
                  reason: FinishReason.ASSISTANT_MESSAGE,
                  value: outcome.text,
                  truncated: outcome.truncated === true,
                }
              : { reason: FinishReason.TOOL_VALUE, value: JSON.stringify(outcome.value) },
        },
      });
    case "stopped": {
      const reason = {
        tool_error: StopReason.TOOL_ERROR,
        cancelled: StopReason.CANCELLED,
        budget_exhausted: StopReason.BUDGET_EXHAUSTED,
        max_iterations: StopReason.MAX_ITERATIONS,
        output_truncated: StopReason.OUTPUT_TRUNCATED,
        park_expired: StopReason.PARK_EXPIRED,
      }[outcome.reason];
      const detail =
        outcome.reason === "tool_error"
          ? { message: outcome.message, code: outcome.code }
          : outcome.reason === "budget_exhausted"
            ? {
                message: outcome.reached
                  ? budgetStopMessage(outcome.reached)
                  : `used ${outcome.usedTokens} of ${outcome.budgetTokens} tokens`,
                code: "",
              }
            : outcome.reason === "max_iterations"
              ? { message: `stopped after ${outcome.iterations} model calls`, code: "" }
              : outcome.reason === "output_truncated"
                ? {
                    message: `the model's output was cut at its token limit inside the arguments of ${outcome.toolName} (call ${outcome.callId}); raise max_output_tokens`,
                    code: "",
                  }
                : outcome.reason === "park_expired"
                  ? { message: "the turn stayed parked past its time to live", code: "" }
                  : { message: "cancelled", code: "" };
      return create(TurnOutcomeSchema, { kind: { case: "stopped", value: { reason, ...detail } } });
    }
    case "failed":
      return create(TurnOutcomeSchema, {
        kind: {
          case: "failed",
          value: {
            reason:
              outcome.reason === "provider_error"
                ? FailureReason.PROVIDER_ERROR
                : outcome.reason === "response_format_mismatch"
                  ? FailureReason.RESPONSE_FORMAT_MISMATCH
                  : outcome.reason === "compaction_failed"
                    ? FailureReason.COMPACTION_FAILED
                    : FailureReason.INTERNAL,
            message: outcome.message,
          },
        },
      });
  }
}
