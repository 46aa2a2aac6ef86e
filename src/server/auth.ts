// Bearer API-key authentication: each key belongs to one tenant, which the services read from the
// context to scope session ids. Health and reflection stay open so probes and grpcurl work
// without credentials; they reveal no tenant data.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import { connectErrorOf } from "../api/errors.js";
import { DEFAULT_TENANT, tenantKey } from "../api/tenancy.js";
import { isTetherError, unauthenticated } from "../domain/errors.js";

const OPEN_PACKAGES = ["grpc.health.v1.", "grpc.reflection.v1.", "grpc.reflection.v1alpha."];

const digest = (key: string) => createHash("sha256").update(key, "utf8").digest();

/**
 * The tenant a request's `authorization` header names, for gRPC (the interceptor below) and the
 * HTTP front door alike (ADR 0037). `apiKeys` maps key → tenant; undefined turns auth off (every
 * caller is the default tenant). Keys are compared by digest in constant time, so timing does not
 * reveal a key's prefix. Throws `unauthenticated` for a missing or unknown key.
 */
export function createKeyCheck(
  apiKeys: ReadonlyMap<string, string> | undefined,
): (authorization: string | undefined) => string {
  const entries = [...(apiKeys ?? new Map<string, string>())].map(([key, tenant]) => ({
    digest: digest(key),
    tenant,
  }));
  return (authorization) => {
    if (apiKeys === undefined) return DEFAULT_TENANT;
    const match = /^Bearer\s+(\S+)\s*$/iu.exec(authorization ?? "");
    if (!match?.[1]) throw unauthenticated("missing bearer API key");
    const presented = digest(match[1]);
    let tenant: string | undefined;
    for (const entry of entries) {
      if (timingSafeEqual(entry.digest, presented)) tenant = entry.tenant;
    }
    if (tenant === undefined) throw unauthenticated("unknown API key");
    return tenant;
  };
}

/** Health and reflection pass without a key; every other call's tenant comes from createKeyCheck. */
export function createAuthInterceptor(
  apiKeys: ReadonlyMap<string, string> | undefined,
): Interceptor {
  const tenantOf = createKeyCheck(apiKeys);
  return (next) => (req) => {
    if (apiKeys === undefined) {
      req.contextValues.set(tenantKey, DEFAULT_TENANT);
      return next(req);
    }
    if (OPEN_PACKAGES.some((p) => req.service.typeName.startsWith(p))) return next(req);
    let tenant: string;
    try {
      tenant = tenantOf(req.header.get("authorization") ?? undefined);
    } catch (error) {
      throw isTetherError(error) ? connectErrorOf(error) : error;
    }
    req.contextValues.set(tenantKey, tenant);
    return next(req);
  };
}
