// What a pending turn input carries in its opaque store payload: the user's items and the
// per-turn settings of the request that submitted it.
import type { InputItem } from "../../domain/conversation.js";
import type { PendingTurnInput } from "../../domain/inputs.js";
import {
  settingsFromStored,
  settingsToStored,
  type StoredTurnSettings,
  type TurnSettings,
} from "../../domain/turn-settings.js";
import type { ToolDefinition } from "../../ports/tool-executor.js";
import { decodeJson, encodeJson } from "./message-codec.js";

export type { TurnSettings };

export interface InputPayload {
  items: InputItem[];
  clientTools: ToolDefinition[];
  settings: TurnSettings;
  /** The W3C traceparent of the request that submitted it: the parent of its turn's span. */
  trace?: string;
}

type StoredInputPayload = Omit<InputPayload, "settings"> & { settings: StoredTurnSettings };

export function encodeInputPayload(payload: InputPayload): string {
  return encodeJson({ ...payload, settings: settingsToStored(payload.settings) });
}

/** Tolerates payloads written by other clients (e.g. plain text through QueueService). */
export function decodeInputPayload(raw: string): InputPayload {
  try {
    const parsed = decodeJson<Partial<StoredInputPayload>>(raw);
    if (parsed && Array.isArray(parsed.items)) {
      return {
        items: parsed.items,
        clientTools: Array.isArray(parsed.clientTools) ? parsed.clientTools : [],
        settings: settingsFromStored(parsed.settings),
        ...(typeof parsed.trace === "string" && { trace: parsed.trace }),
      };
    }
  } catch {
    // not JSON: plain text below
  }
  return { items: [{ type: "text", text: raw }], clientTools: [], settings: {} };
}

/** A claimed input with its payload decoded: a turn decodes each input it takes once. */
export interface DecodedInput {
  input: PendingTurnInput;
  payload: InputPayload;
}

export const decodeInputs = (inputs: readonly PendingTurnInput[]): DecodedInput[] =>
  inputs.map((input) => ({ input, payload: decodeInputPayload(input.payload) }));
