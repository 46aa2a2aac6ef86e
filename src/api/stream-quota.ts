// The concurrent_streams quota (ADR 0028): how many streams (WatchSession, StreamTurn) a tenant
// holds open on this replica. Counted in process: what it protects is the replica's own memory
// and its share of blocking reads, and a count in Redis would cost a write per stream.
import type { Interceptor } from "@connectrpc/connect";
import {
  quotaExhausted,
  SLOT_RETRY_MS,
  streamLimitOf,
  type QuotaConfig,
  type QuotaLimit,
  type QuotaLimitName,
} from "../domain/quotas.js";
import { tenantKey } from "./tenancy.js";

export interface StreamGate {
  /** Counts a stream of the tenant in; throws quota_exhausted past its limit. Returns its leave. */
  enter(tenant: string): () => void;
  /** Streams the tenant holds open on this replica now. */
  open(tenant: string): number;
  limitOf(tenant: string): QuotaLimit;
}

export interface StreamGateOptions {
  config: QuotaConfig;
  /** Hears each stream refused (for the refusal metric and the log). */
  onRefusal?: (tenant: string, limit: QuotaLimitName) => void;
}

export function createStreamGate(options: StreamGateOptions): StreamGate {
  const open = new Map<string, number>();
  const limitOf = (tenant: string): QuotaLimit => streamLimitOf(options.config, tenant);
  return {
    enter(tenant) {
      const now = open.get(tenant) ?? 0;
      const { max } = limitOf(tenant);
      if (now >= max) {
        options.onRefusal?.(tenant, "concurrent_streams");
        throw quotaExhausted(tenant, "concurrent_streams", SLOT_RETRY_MS, max);
      }
      open.set(tenant, now + 1);
      let left = false;
      return () => {
        if (left) return;
        left = true;
        const rest = (open.get(tenant) ?? 1) - 1;
        if (rest > 0) open.set(tenant, rest);
        else open.delete(tenant);
      };
    },
    open: (tenant) => open.get(tenant) ?? 0,
    limitOf,
  };
}

/** The RPCs whose streams count: each may hold a blocking read of the event log while open. */
const STREAMS = new Set(["tether.v1.TurnService/StreamTurn", "tether.v1.TurnService/WatchSession"]);

/**
 * Counts each stream from its start until its last message was sent, it failed, or the client
 * went away, whichever comes first; refuses one past the tenant's limit with RESOURCE_EXHAUSTED.
 */
export function createStreamQuotaInterceptor(gate: StreamGate): Interceptor {
  return (next) => async (req) => {
    if (!STREAMS.has(`${req.service.typeName}/${req.method.name}`)) return next(req);
    const leave = gate.enter(req.contextValues.get(tenantKey));
    // A client gone before the first message is pulled never runs the wrapper's `finally`.
    req.signal.addEventListener("abort", leave, { once: true });
    let res;
    try {
      res = await next(req);
    } catch (error) {
      leave();
      throw error;
    }
    if (!res.stream) {
      leave();
      return res;
    }
    return { ...res, message: countedUntilDone(res.message, leave) };
  };
}

async function* countedUntilDone<M>(messages: AsyncIterable<M>, leave: () => void) {
  try {
    yield* messages;
  } finally {
    leave();
  }
}
