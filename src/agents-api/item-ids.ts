// The one rule for item ids (ADR 0037, "Items and turns"): the events out translator names the
// items it streams by it, and the items lists name the stored transcript's items by it, so the
// ids a client saw on the stream are the ids it lists. Every id follows from what the log and
// the transcript both keep: an input's id, a turn id with a message's number, a call id.
export const itemIds = {
  /** A user message that carried the input `inputId`. */
  userMessage: (inputId: string): string => `msg_${inputId}`,
  /**
   * A user message that carried no input (queued work's text): its turn and its number among the
   * turn's user messages. Never streamed, so only the lists name it.
   */
  unsourcedUserMessage: (turnId: string, n: number): string => `msg_${turnId}_u${n}`,
  /** The turn's `n`-th assistant message (from 0): one per run of text the model wrote. */
  assistantMessage: (turnId: string, n: number): string => `msg_${turnId}_${n}`,
  functionCall: (callId: string): string => `fc_${callId}`,
  functionCallOutput: (callId: string): string => `fco_${callId}`,
  mcpCall: (callId: string): string => `mcp_${callId}`,
};
