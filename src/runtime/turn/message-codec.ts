// Committed messages are stored as JSON strings; inline image bytes travel as base64.
import type { InputItem, Message } from "../../domain/conversation.js";

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

/** Where a committed message came from: its turn and the revision that committed it. */
export interface CommitMark {
  turnId: string;
  revision: number;
}

/** A committed message carries its turn and revision beside the message's own fields. */
export function encodeCommitted(message: Message, mark: CommitMark): string {
  return JSON.stringify({ ...message, turnId: mark.turnId, revision: mark.revision }, replacer);
}

/** The message alone (what providers get); see decodeCommitted for its mark. */
export function decodeMessage(json: string): Message {
  return decodeCommitted(json).message;
}

/** The message and, for messages committed with one, its mark (revision 0 when unknown). */
export function decodeCommitted(json: string): { message: Message; mark: CommitMark } {
  const { turnId, revision, ...message } = JSON.parse(json, reviver) as Message & {
    turnId?: string;
    revision?: number;
  };
  return {
    message: message as Message,
    mark: { turnId: turnId ?? "", revision: revision ?? 0 },
  };
}

export function encodeJson(value: unknown): string {
  return JSON.stringify(value, replacer);
}

export function decodeJson<T>(json: string): T {
  return JSON.parse(json, reviver) as T;
}

export type { InputItem };
