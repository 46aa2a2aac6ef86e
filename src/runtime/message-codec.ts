// Committed messages are stored as JSON strings; inline image bytes travel as base64.
import type { InputItem, Message } from "../domain/conversation.js";

const BYTES_TAG = "$bytes";

function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return { [BYTES_TAG]: Buffer.from(value).toString("base64") };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (
    value !== null &&
    typeof value === "object" &&
    BYTES_TAG in value &&
    typeof (value as Record<string, unknown>)[BYTES_TAG] === "string"
  ) {
    return new Uint8Array(
      Buffer.from((value as Record<string, string>)[BYTES_TAG] ?? "", "base64"),
    );
  }
  return value;
}

export function encodeMessage(message: Message): string {
  return JSON.stringify(message, replacer);
}

export function decodeMessage(json: string): Message {
  return JSON.parse(json, reviver) as Message;
}

export function encodeJson(value: unknown): string {
  return JSON.stringify(value, replacer);
}

export function decodeJson<T>(json: string): T {
  return JSON.parse(json, reviver) as T;
}

export type { InputItem };
