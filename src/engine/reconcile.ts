// Turns one provider call into assistant output: forwards streamed text as it arrives, then
// reconciles the stream with the final response (DESIGN.md section 4, rules 1 to 5).
import { joinText, type OutputPart } from "../domain/conversation.js";
import { isZeroUsage, ZERO_USAGE, type UsageTotals } from "../domain/usage.js";
import type { ModelCall, ModelResponse } from "../ports/model-provider.js";

export interface ReconciledResponse {
  /** Reasoning parts, then the joined text (if any), then tool calls in the model's order. */
  parts: OutputPart[];
  text: string;
  usage: UsageTotals;
  /** The provider said the output was cut at its token limit. */
  truncated: boolean;
}

/** What a call forwarded before it ended; kept when the call fails or is cancelled mid-stream. */
export interface StreamProgress {
  forwardedText: string;
}

/** Receives assistant text as it becomes known; may return a promise to apply backpressure. */
export interface TextForwarder {
  forwardText(text: string): void | Promise<void>;
  /** Streamed reasoning; shown to clients, never counted as forwarded answer text. */
  forwardReasoning(text: string): void | Promise<void>;
}

/**
 * Drains `call`, handing each new piece of text to `out` (awaited when it returns a promise),
 * and returns the reconciled response. Rejects with the provider's error; `progress` tells what
 * was forwarded by then.
 */
export async function consumeModelCall(
  call: ModelCall,
  out: TextForwarder,
  progress: StreamProgress,
): Promise<ReconciledResponse> {
  const streamed: OutputPart[] = [];
  // Text streamed since the last part boundary: a text part arriving now covers it.
  let pending = "";
  let streamedUsage: UsageTotals | undefined;
  let final: ModelResponse;

  for (;;) {
    const step = await call.next();
    if (step.done === true) {
      final = step.value;
      break;
    }
    const event = step.value;
    if (event.type === "text_delta") {
      if (event.text === "") continue;
      pending += event.text;
      progress.forwardedText += event.text;
      const r = out.forwardText(event.text);
      if (r !== undefined) await r;
    } else if (event.type === "reasoning_delta") {
      if (event.text === "") continue;
      const r = out.forwardReasoning(event.text);
      if (r !== undefined) await r;
    } else if (event.type === "part") {
      const part = event.part;
      if (part.type === "text") {
        // Rule 3: text already streamed as deltas is not streamed again; only a missing tail is.
        if (part.text.startsWith(pending) && part.text.length > pending.length) {
          const tail = part.text.slice(pending.length);
          progress.forwardedText += tail;
          const r = out.forwardText(tail);
          if (r !== undefined) await r;
        }
        pending = "";
        if (part.text !== "") streamed.push(part);
      } else {
        if (pending !== "") streamed.push({ type: "text", text: pending });
        pending = "";
        streamed.push(part);
      }
    } else {
      streamedUsage = event.usage;
    }
  }
  if (pending !== "") streamed.push({ type: "text", text: pending });

  // Rule 2: an empty final response falls back to what was streamed.
  let chosen: readonly OutputPart[];
  if (final.parts.length > 0) chosen = final.parts;
  else if (streamed.length > 0) chosen = streamed;
  else chosen = [];

  let text = joinText(chosen);
  if (text === "") text = final.fullText !== "" ? final.fullText : progress.forwardedText;

  // Rule 4: text that was never streamed (or only partly) is forwarded now, once.
  const forwarded = progress.forwardedText;
  if (text.length > forwarded.length && text.startsWith(forwarded)) {
    const tail = text.slice(forwarded.length);
    progress.forwardedText = text;
    const r = out.forwardText(tail);
    if (r !== undefined) await r;
  }

  const parts: OutputPart[] = [];
  const calls: OutputPart[] = [];
  for (const part of chosen) {
    if (part.type === "reasoning") parts.push(part);
    else if (part.type === "tool_call") calls.push(part);
  }
  if (text !== "") parts.push({ type: "text", text });
  for (const c of calls) parts.push(c);

  // Rule 5: the final usage wins when it says anything; otherwise the streamed snapshot.
  const usage = !isZeroUsage(final.usage)
    ? (final.usage ?? ZERO_USAGE)
    : (streamedUsage ?? ZERO_USAGE);
  return { parts, text, usage, truncated: final.truncated === true };
}
