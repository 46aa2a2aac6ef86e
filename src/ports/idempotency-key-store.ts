// The idempotency-key port (ADR 0037, "Idempotency-Key on creates"): a tenant's key for one kind
// of create names the id that create makes, with a hash of the request, for a bounded time. The
// key is claimed before anything is made, in one atomic step on its own key (one Lua script on
// Redis); every step after it is idempotent on the id it names, so any number of attempts, on
// any replica and after any crash, make one object.

/** The create a key was sent with: its kind scopes the key beside the tenant. */
export type KeyedCreate =
  | "agents.create"
  /** An agent's update: the key names the version the update makes. */
  | "agents.update"
  | "sessions.create"
  | "automations.create"
  /** A manual invocation of an automation: the key names the invocation it asked for. */
  | "automations.invoke";

export interface IdempotencyKeyClaim {
  tenant: string;
  create: KeyedCreate;
  /** The client's `Idempotency-Key`. */
  key: string;
  /** A hash of the request (its canonical body): another one under the key is a conflict. */
  requestHash: string;
  /** The id a first claim names; a later one gets the id its first claim named. */
  id: string;
  /** How long the key is kept from its first claim. */
  ttlMs: number;
}

export interface IdempotencyKeyStore {
  /**
   * In one step: the key unheld → held for `ttlMs` with the hash and `id` (first); held with the
   * same hash → the id it names (not first; nothing changes); held with another hash →
   * source_key_conflict (nothing changes).
   */
  claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<{ id: string; first: boolean }>;
}
