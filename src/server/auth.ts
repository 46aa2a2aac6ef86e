// Bearer API-key authentication: each key belongs to one tenant, which the services read from the
// context to scope session ids. Health and reflection stay open so probes and grpcurl work
// without credentials; they reveal no tenant data.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import { connectErrorOf } from "../api/errors.js";
import { DEFAULT_TENANT, tenantKey } from "../api/tenancy.js";
import { unauthenticated } from "../domain/errors.js";

const OPEN_PACKAGES = ["grpc.health.v1.", "grpc.reflection.v1.", "grpc.reflection.v1alpha."];

const digest = (key: string) => createHash("sha256").update(key, "utf8").digest();

/**
 * `apiKeys` maps key → tenant; undefined turns auth off (every caller is the default tenant).
 * Keys are compared by digest in constant time, so timing does not reveal a key's prefix.
 */
export function createAuthInterceptor(
  apiKeys: ReadonlyMap<string, string> | undefined,
): Interceptor {
  const entries = [...(apiKeys ?? new Map<string, string>())].map(([key, tenant]) => ({
    digest: digest(key),
    tenant,
  }));
  return (next) => (req) => {
    if (apiKeys === undefined) {
      req.contextValues.set(tenantKey, DEFAULT_TENANT);
      return next(req);
    }
    if (OPEN_PACKAGES.some((p) => req.service.typeName.startsWith(p))) return next(req);
    const header = req.header.get("authorization") ?? "";
    const match = /^Bearer\s+(\S+)\s*$/iu.exec(header);
    if (!match?.[1]) {
      throw connectErrorOf(unauthenticated("missing bearer API key"));
    }
    const presented = digest(match[1]);
    let tenant: string | undefined;
    for (const entry of entries) {
      if (timingSafeEqual(entry.digest, presented)) tenant = entry.tenant;
    }
    if (tenant === undefined) throw connectErrorOf(unauthenticated("unknown API key"));
    req.contextValues.set(tenantKey, tenant);
    return next(req);
  };
}
