// Branded identifiers and their validation. A raw string becomes an id only through these
// parsers, so an empty, oversize or unsafe id is refused with a typed error naming the field.
import { invalidArgument } from "./errors.js";

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

export type SessionId = Brand<string, "SessionId">;
export type BatchId = Brand<string, "BatchId">;
export type InputId = Brand<string, "InputId">;
export type ClaimId = Brand<string, "ClaimId">;
/**
 * A webhook outbox (ADR 0021). A session's own outbox is named by its session id (its rows live
 * in the session's slot, written by its commits), so every SessionId is an OutboxId; other
 * outboxes (a schedule's pause events, `<tenant>:schedule:<id>`) are not sessions, so an
 * OutboxId is not a SessionId.
 */
export type OutboxId = Brand<string, "OutboxId"> | SessionId;

export const MAX_ID_LENGTH = 200;

// Braces would break the Redis hash tag `{<session>}`; control characters break logs and keys.
// eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
const UNSAFE_ID = /[{}\s\u0000-\u001f\u007f]/u;

export function checkId(field: string, raw: unknown): string {
  if (typeof raw !== "string" || raw.length === 0) {
    throw invalidArgument(field, "must be a non-empty string");
  }
  if (raw.length > MAX_ID_LENGTH) {
    throw invalidArgument(field, `must be at most ${MAX_ID_LENGTH} characters`);
  }
  if (UNSAFE_ID.test(raw)) {
    throw invalidArgument(field, "must not contain braces, whitespace or control characters");
  }
  return raw;
}

/**
 * Session ids the API makes are `<tenant>:<client id>` (ADR 0003); neither part may contain the
 * separator. Whatever reaches a client (an event, a tool's idempotency key) names the session
 * by its client id alone.
 */
export const TENANT_SEPARATOR = ":";

/** The id the client knows: the part after the tenant prefix (the whole id when there is none). */
export function clientSessionId(id: string): string {
  const at = id.indexOf(TENANT_SEPARATOR);
  return at < 0 ? id : id.slice(at + 1);
}

// The parsers: the only way a raw string becomes a branded id (the store port and the API edge
// call them; everything past those edges trusts the brand).
export const parseSessionId = (raw: string, field = "session_id"): SessionId =>
  checkId(field, raw) as SessionId;
export const parseBatchId = (raw: string, field = "batch_id"): BatchId =>
  checkId(field, raw) as BatchId;
export const parseInputId = (raw: string, field = "input_id"): InputId =>
  checkId(field, raw) as InputId;
export const parseClaimId = (raw: string, field = "claim_id"): ClaimId =>
  checkId(field, raw) as ClaimId;
export const parseOutboxId = (raw: string, field = "outbox_id"): OutboxId =>
  checkId(field, raw) as OutboxId;
