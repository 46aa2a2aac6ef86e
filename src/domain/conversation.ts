// The conversation a turn reads and extends: user input (text and images), assistant output parts,
// and tool results. Providers translate it to their wire formats; the runtime stores it as JSON.
import { TetherError, type FieldViolation } from "./errors.js";

export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type ImageSource =
  { kind: "inline"; mediaType: ImageMediaType; data: Uint8Array } | { kind: "url"; url: string };

export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";
export const IMAGE_MEDIA_TYPES: readonly ImageMediaType[] = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
];

/** One item of user input. */
export type InputItem = { type: "text"; text: string } | { type: "image"; image: ImageSource };

/** One part of a model's output, streamed or final. */
export type OutputPart =
  | { type: "text"; text: string }
  /**
   * `client`: set in the committed transcript when the client answered the call (a client tool
   * of the turn), so the call is shown as the stream showed it (ADR 0037).
   */
  | { type: "tool_call"; callId: string; toolName: string; argumentsJson: string; client?: true }
  | { type: "reasoning"; text: string };

export type ToolCallPart = Extract<OutputPart, { type: "tool_call" }>;

export type Message =
  | { role: "system"; text: string }
  /**
   * `inputIds`: the turn inputs the message carries, when it came from some (a turn's own input,
   * a steer it admitted); the Agents API names its item after them (ADR 0037).
   */
  | { role: "user"; content: InputItem[]; inputIds?: string[] }
  | { role: "assistant"; parts: OutputPart[] }
  | {
      role: "tool";
      callId: string;
      toolName: string;
      /** What the model reads: the tool's output, JSON-encoded unless it is a string. */
      content: string;
      isError: boolean;
    }
  /** A summary of the messages before it (domain/compaction.ts); providers never receive it. */
  | CompactionItem;

export type CompactionMode = "summarize" | "native" | "auto";

/**
 * The transcript item a compaction commits (domain/compaction.ts). Messages before
 * `coversThroughMessage` (an index into the session's transcript) reach providers as `summary`;
 * tool results whose call ids are in `clearedToolResults` as a placeholder. An empty summary
 * means the compaction only cleared tool results.
 */
export interface CompactionItem {
  role: "compaction";
  coversThroughMessage: number;
  summary: string;
  provider: string;
  model: string;
  tokensBefore: number;
  tokensAfter: number;
  clearedToolResults: string[];
  mode: CompactionMode;
  /**
   * Mode native: the provider's own compaction state (Anthropic's signed compaction block, as
   * JSON), sent back verbatim while the turn's provider and model are `provider` and `model`;
   * any other provider or model is sent `summary` as text.
   */
  native?: string;
}

export function userText(text: string): Message {
  return { role: "user", content: [{ type: "text", text }] };
}

/** Text of an assistant message: its text parts joined by a blank line. */
export function assistantText(message: Message): string {
  if (message.role !== "assistant") return "";
  return joinText(message.parts);
}

export function joinText(parts: readonly OutputPart[]): string {
  let out = "";
  for (const part of parts) {
    if (part.type !== "text" || part.text === "") continue;
    out = out === "" ? part.text : `${out}\n\n${part.text}`;
  }
  return out;
}

export interface InputLimits {
  /** Largest inline image, in bytes. */
  maxInlineImageBytes: number;
  maxItems: number;
}

export const DEFAULT_INPUT_LIMITS: InputLimits = {
  maxInlineImageBytes: 5 * 1024 * 1024,
  maxItems: 64,
};

/** Field violations of a turn's input; empty when it is acceptable. */
export function validateInputItems(
  items: readonly InputItem[],
  limits: InputLimits = DEFAULT_INPUT_LIMITS,
): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (items.length === 0) {
    violations.push({ field: "items", description: "at least one input item is required" });
  }
  if (items.length > limits.maxItems) {
    violations.push({ field: "items", description: `at most ${limits.maxItems} items` });
  }
  items.forEach((item, i) => {
    if (item.type === "text") return;
    const field = `items[${i}].image`;
    const image = item.image;
    if (image.kind === "inline") {
      if (!IMAGE_MEDIA_TYPES.includes(image.mediaType)) {
        violations.push({
          field: `${field}.media_type`,
          description: `unsupported media type ${String(image.mediaType)}`,
        });
      }
      if (image.data.byteLength === 0) {
        violations.push({ field: `${field}.data`, description: "image data is empty" });
      } else if (image.data.byteLength > limits.maxInlineImageBytes) {
        violations.push({
          field: `${field}.data`,
          description: `inline image is ${image.data.byteLength} bytes; the limit is ${limits.maxInlineImageBytes}`,
        });
      }
      return;
    }
    if (!/^https?:\/\/[^\s]+$/i.test(image.url)) {
      violations.push({ field: `${field}.url`, description: "image URL must be http or https" });
    }
  });
  return violations;
}

export function invalidTurnInput(violations: FieldViolation[]): TetherError {
  return new TetherError(
    "invalid_argument",
    `invalid turn input: ${violations.map((v) => `${v.field}: ${v.description}`).join("; ")}`,
    { violations },
  );
}
