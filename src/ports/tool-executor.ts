// The tool port: definitions the model sees, and execution of one call under an AbortSignal.
import type { JsonValue } from "../domain/conversation.js";

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  inputSchema: { [key: string]: JsonValue };
  /** Each call waits for an approval before it runs (providers never see this). */
  requiresApproval?: boolean;
}

export interface ToolCallRequest {
  callId: string;
  toolName: string;
  /** Parsed arguments; the engine answers malformed JSON itself and never calls the executor. */
  arguments: JsonValue;
  argumentsJson: string;
}

export interface ToolContext {
  /** Aborts on turn cancellation or tool timeout; a well-behaved tool stops promptly. */
  signal: AbortSignal;
  turnId: string;
}

/** A tool may end the turn: with a value (finish) or as a failure (fail). */
export type ToolControl =
  { type: "finish"; value: JsonValue } | { type: "fail"; code: string; message: string };

export interface ToolResult {
  output: JsonValue;
  /** The call failed; the model reads the output as an error. */
  isError?: boolean;
  control?: ToolControl;
}

export interface ToolExecutor {
  definitions(): readonly ToolDefinition[];
  /** May throw; the engine turns a throw into an error result for the model. */
  execute(call: ToolCallRequest, context: ToolContext): Promise<ToolResult>;
}
