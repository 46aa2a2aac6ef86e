// Tools a turn selects by name from a deployment's tool servers (MCP): the runtime asks for the
// selected ones when a turn starts and learns which selected servers are unavailable right now.
import type { ToolExecutor } from "./tool-executor.js";

export interface SelectedTools {
  executor: ToolExecutor;
  /** Selected servers that cannot serve now: the turn runs without their tools. */
  unavailable: string[];
}

export interface SelectableTools {
  /** The tools `selection` names (server names or `<server>__<tool>`); `keyOf` keys a call. */
  forTurn(selection: readonly string[], keyOf: (callId: string) => string): SelectedTools;
  /** The configured server a tool name belongs to (`<server>__…`), if any. */
  serverOf(toolName: string): string | undefined;
}
