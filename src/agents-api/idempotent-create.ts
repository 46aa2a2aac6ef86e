// `Idempotency-Key` on the door's creates (ADR 0037, "Idempotency-Key on creates"). The key is
// claimed first, in one store step that names the id the create makes (a fresh one the first
// time, the first claim's on a retry) with a hash of the request; every step of the create after
// it is idempotent on that id (a session's creation is the commit from head 0, an agent's id is
// taken once, an input's source key derives from the key). So a retry, on any replica, after any
// crash, or while the first attempt still runs, finishes the same object and answers with it;
// there is no window to answer 409 for. Another body under the key is source_key_conflict (422).
import { createHash } from "node:crypto";
import { checkId } from "../domain/ids.js";
import type { IdempotencyKeyStore, KeyedCreate } from "../ports/idempotency-key-store.js";
import type { Call } from "./route-table.js";

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

export interface KeyedCreates {
  store: IdempotencyKeyStore;
  /** How long a key is kept from its first use. */
  ttlMs: number;
}

/** The request's `Idempotency-Key` (the id rules; a 400 names the header), if it sent one. */
export function idempotencyKeyOf(call: Call): string | undefined {
  const raw = call.header(IDEMPOTENCY_KEY_HEADER);
  return raw === undefined ? undefined : checkId("Idempotency-Key", raw);
}

export interface CreateId {
  id: string;
  /** The request's key, when it sent one: the create's later steps derive their keys from it. */
  key?: string;
  /** False when an earlier request under the key named the id: this one may find it made. */
  first: boolean;
}

/** The id this create makes: `fresh()` without a key; under a key, the one the key names. */
export async function createIdOf(
  keys: KeyedCreates,
  call: Call,
  create: KeyedCreate,
  fresh: () => string,
  /** What the request hash covers: the body, unless the path names more (whose invocation). */
  hashed: unknown = call.body,
): Promise<CreateId> {
  const key = idempotencyKeyOf(call);
  if (key === undefined) return { id: fresh(), first: true };
  const claimed = await keys.store.claimIdempotencyKey({
    tenant: call.scope.tenant,
    create,
    key,
    requestHash: requestHashOf(hashed),
    id: fresh(),
    ttlMs: keys.ttlMs,
  });
  return { ...claimed, key };
}

/** SHA-256 of the body as canonical JSON (object keys sorted): equal bodies hash equal. */
export function requestHashOf(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
