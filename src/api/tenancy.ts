// Tenant scoping of session ids: the ONE place a client-visible session id becomes a store id and
// back. Store ids are `${tenant}:${clientId}`, so tenants can never name each other's sessions and
// another tenant's session is simply not found.
import { createContextKey, type ContextValues } from "@connectrpc/connect";
import { invalidArgument } from "../domain/errors.js";
import {
  clientSessionId,
  parseSessionId,
  TENANT_SEPARATOR,
  type SessionId,
} from "../domain/ids.js";

/** The tenant of an unauthenticated (embedded, auth-off) deployment. */
export const DEFAULT_TENANT = "default";

/** Set by the auth interceptor; services read it to scope every session id. */
export const tenantKey = createContextKey<string>(DEFAULT_TENANT, { description: "tether tenant" });

const CLIENT_SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/u;
const TENANT_NAME = /^[A-Za-z0-9._-]{1,64}$/u;

export function checkTenantName(tenant: string): string {
  if (!TENANT_NAME.test(tenant)) {
    throw new Error(`tenant "${tenant}" must be 1-64 characters of letters, digits, '.', '_', '-'`);
  }
  return tenant;
}

/**
 * A session as a request names it, computed once at the edge: the store id the runtime works on,
 * and the client's own id (validated), which the runtime puts in what this client sees (its
 * events, its refusals).
 */
export interface ScopedSession {
  readonly sessionId: SessionId;
  readonly publicSessionId: string;
}

/** Maps session ids between one tenant's client view and the store. */
export interface TenantScope {
  readonly tenant: string;
  /** Validates a client session id and prefixes it; `field` names it in the violation. */
  toStore(clientId: string, field: string): SessionId;
  /** `toStore` with the client's id kept beside it, for the runtime's calls that need both. */
  session(clientId: string, field: string): ScopedSession;
  /** Strips the tenant prefix from a store id this scope produced. */
  toClient(storeId: string): string;
  /** The store-id prefix every session of this tenant shares (for listing). */
  readonly prefix: string;
}

export function checkClientSessionId(clientId: string, field: string): string {
  if (!CLIENT_SESSION_ID.test(clientId)) {
    throw invalidArgument(field, "must be 1-128 characters of letters, digits, '.', '_' or '-'");
  }
  return clientId;
}

export function createTenantScope(tenant: string): TenantScope {
  const prefix = `${tenant}${TENANT_SEPARATOR}`;
  const toStore = (clientId: string, field: string): SessionId =>
    parseSessionId(`${prefix}${checkClientSessionId(clientId, field)}`, field);
  return {
    tenant,
    prefix,
    toStore,
    session: (clientId, field) => ({
      sessionId: toStore(clientId, field),
      publicSessionId: clientId,
    }),
    toClient: (storeId) => (storeId.startsWith(prefix) ? clientSessionId(storeId) : storeId),
  };
}

export function scopeOf(values: ContextValues): TenantScope {
  return createTenantScope(values.get(tenantKey));
}
