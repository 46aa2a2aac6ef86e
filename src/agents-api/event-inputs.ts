// What the Agents API's input events carry, in Tether's terms (ADR 0037): a message's content as
// a turn's input items, a tool result's output as the text a client tool returns, an approval
// response as a decision, and the `Tether-Busy-Strategy` header as a busy strategy.
import { invalidTurnInput, validateInputItems, type InputItem } from "../domain/conversation.js";
import { invalidArgument } from "../domain/errors.js";
import type { BusyStrategy } from "../runtime/index.js";
import type { InputContentPart } from "./event-schemas.js";

export const BUSY_STRATEGY_HEADER = "tether-busy-strategy";
const STRATEGIES: readonly BusyStrategy[] = ["enqueue", "steer", "reject", "interrupt"];

/** The header's strategy; absent, `steer` (the Agents API steers a message into a running turn). */
export function busyStrategyOf(raw: string | undefined): BusyStrategy {
  if (raw === undefined || raw.trim() === "") return "steer";
  const wanted = raw.trim().toLowerCase();
  const found = STRATEGIES.find((s) => s === wanted);
  if (!found)
    throw invalidArgument("Tether-Busy-Strategy", `must be one of ${STRATEGIES.join(", ")}`);
  return found;
}

/** Every user message's content, in order, as one input (`field` names the event). */
export function inputItemsOf(
  messages: readonly { content: InputContentPart[] }[],
  field: string,
): InputItem[] {
  const items = messages.flatMap((m) => m.content.map(inputItemOf));
  const violations = validateInputItems(items);
  if (violations.length > 0) {
    throw invalidTurnInput(
      violations.map((v) => ({ ...v, field: v.field.replace(/^items/u, `${field}.input`) })),
    );
  }
  return items;
}

const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=\s]+)$/u;

/** One content part as a turn's input item; a `data:` image URL is carried inline. */
export function inputItemOf(part: InputContentPart): InputItem {
  if (part.type === "input_text") return { type: "text", text: part.text ?? "" };
  const url = part.image_url ?? "";
  const inline = DATA_URL.exec(url);
  if (!inline) return { type: "image", image: { kind: "url", url } };
  return {
    type: "image",
    image: {
      kind: "inline",
      mediaType: inline[1] as "image/png",
      data: new Uint8Array(Buffer.from(inline[2] ?? "", "base64")),
    },
  };
}

/** A tool result's `output` (a string or content parts) as the text a client tool returns. */
export function outputText(output: string | InputContentPart[] | null | undefined): string {
  if (output === null || output === undefined) return "";
  if (typeof output === "string") return output;
  return output
    .map((part) => (part.type === "input_text" ? (part.text ?? "") : (part.image_url ?? "")))
    .join("\n");
}

/** `success: false` is a tool error: its text is `error`, else the output, else a fixed one. */
export function toolResultOf(event: {
  call_id: string;
  success: boolean;
  output?: string | InputContentPart[] | null;
  error?: string | null;
}): { callId: string; output: string; isError: boolean } {
  const output = outputText(event.output);
  if (event.success) return { callId: event.call_id, output, isError: false };
  const text = event.error ?? (output === "" ? "the tool failed" : output);
  return { callId: event.call_id, output: text, isError: true };
}

/** The reasons a refused approval carries: the model reads them as the tool's answer. */
export const DECISION_REASONS = {
  approve: "",
  deny: "The user denied this tool call.",
  cancel: "The user cancelled this tool call.",
} as const;
