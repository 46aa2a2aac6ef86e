// LeaseService over a RuntimeStore: the store's lease, claim and commit operations for workers
// that bring their own agent loop. Each RPC is one store call; the store stays the judge of every
// law, this layer only converts and scopes session ids to the caller's tenant. The RPCs over a
// turn's waits (tool calls, parked turns) are turn-waits.ts's.
import type { ServiceImpl } from "@connectrpc/connect";
import type { BatchId } from "../domain/ids.js";
import type { LeaseClaimOutcome } from "../domain/lease.js";
import type { LeaseService } from "../gen/tether/v1/lease_service_pb.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { claimPointFromProto, inputClaimToProto } from "./convert/inputs.js";
import { fenceFromProto, leaseToProto, ownerFromProto } from "./convert/lease.js";
import { claimBoundaries, claimByIdStatuses, workClaimToProto } from "./convert/queue.js";
import { fromUint64, type SessionIdMap } from "./convert/scalars.js";
import {
  commitFromProto,
  markFromProto,
  receiptToProto,
  snapshotToProto,
} from "./convert/session.js";
import { scopeOf } from "./tenancy.js";
import { createTurnWaitRpcs } from "./turn-waits.js";

export interface LeaseServiceOptions {
  store: RuntimeStore;
}

function claimResult(outcome: LeaseClaimOutcome, ids: SessionIdMap) {
  return outcome.kind === "acquired"
    ? { case: "acquired" as const, value: leaseToProto(outcome.lease, ids) }
    : { case: "busy" as const, value: leaseToProto(outcome.holder, ids) };
}

export function createLeaseService(options: LeaseServiceOptions): ServiceImpl<typeof LeaseService> {
  const { store } = options;
  return {
    ...createTurnWaitRpcs(store),

    async claimLease(req, ctx) {
      const scope = scopeOf(ctx.values);
      const outcome = await store.tryClaimLease(
        scope.toStore(req.sessionId, "session_id"),
        ownerFromProto(req.owner, "owner"),
        fromUint64(req.ttlMs, "ttl_ms"),
      );
      return {
        result: claimResult(outcome, scope),
        reentered: outcome.kind === "acquired" && outcome.reentered,
        vacant: outcome.kind === "acquired" && outcome.vacant,
      };
    },

    async renewLease(req, ctx) {
      const scope = scopeOf(ctx.values);
      const fence = fenceFromProto(req.fence, scope, "fence");
      const lease = await store.renewLease(fence, fromUint64(req.ttlMs, "ttl_ms"));
      return { lease: leaseToProto(lease, scope) };
    },

    async renewLeases(req, ctx) {
      const scope = scopeOf(ctx.values);
      const fences = req.fences.map((f, i) => fenceFromProto(f, scope, `fences[${i}]`));
      const renewals = await store.renewLeases(fences, fromUint64(req.ttlMs, "ttl_ms"));
      return {
        renewals: renewals.map((r) =>
          r.kind === "renewed"
            ? { renewed: true, expiresAtMs: BigInt(r.expiresAtMs) }
            : { renewed: false, expiresAtMs: 0n },
        ),
      };
    },

    async releaseLease(req, ctx) {
      const scope = scopeOf(ctx.values);
      const fence = fenceFromProto(req.fence, scope, "fence");
      const outcome = req.onlyIfIdle
        ? await store.releaseIfIdle(fence)
        : await store.releaseLease(fence);
      return { released: outcome.kind === "released", pending: outcome.kind === "pending" };
    },

    async reclaimLease(req, ctx) {
      const scope = scopeOf(ctx.values);
      const outcome = await store.reclaimLease(
        scope.toStore(req.sessionId, "session_id"),
        ownerFromProto(req.claimant, "claimant"),
        fenceFromProto(req.observed, scope, "observed"),
        fromUint64(req.ttlMs, "ttl_ms"),
      );
      return { result: claimResult(outcome, scope) };
    },

    async getLease(req, ctx) {
      const scope = scopeOf(ctx.values);
      const lease = await store.currentLease(scope.toStore(req.sessionId, "session_id"));
      return lease ? { lease: leaseToProto(lease, scope) } : {};
    },

    async claimReadyWork(req, ctx) {
      const scope = scopeOf(ctx.values);
      const claim = await store.claimReadyWork(
        fenceFromProto(req.fence, scope, "fence"),
        claimBoundaries.fromProto(req.boundary, "boundary"),
        req.maxBatches,
      );
      return claim ? { claim: workClaimToProto(claim, scope) } : {};
    },

    async claimWorkByIds(req, ctx) {
      const scope = scopeOf(ctx.values);
      const report = await store.claimWorkByIds(
        fenceFromProto(req.fence, scope, "fence"),
        req.batchIds as BatchId[],
      );
      return {
        ...(report.claim ? { claim: workClaimToProto(report.claim, scope) } : {}),
        outcomes: report.statuses.map((s) => ({
          batchId: s.batchId,
          status: claimByIdStatuses.toProto(s.status),
        })),
      };
    },

    async claimInputs(req, ctx) {
      const scope = scopeOf(ctx.values);
      const claim = await store.claimInputs(
        fenceFromProto(req.fence, scope, "fence"),
        claimPointFromProto(req.turnId, req.checkpoint),
        req.maxInputs,
      );
      return claim ? { claim: inputClaimToProto(claim, scope) } : {};
    },

    async deferActiveInputs(req, ctx) {
      const scope = scopeOf(ctx.values);
      const report = await store.deferActiveInputs(
        fenceFromProto(req.fence, scope, "fence"),
        req.turnId,
      );
      return { deferredInputIds: report.deferredInputIds };
    },

    async commit(req, ctx) {
      const scope = scopeOf(ctx.values);
      const receipt = await store.commit(commitFromProto(req, scope));
      return { receipt: receiptToProto(receipt, scope) };
    },

    async loadSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const snapshot = await store.loadSession(
        scope.toStore(req.sessionId, "session_id"),
        markFromProto(req.since, "since"),
      );
      return snapshot ? { snapshot: snapshotToProto(snapshot, scope) } : {};
    },

    async readRevision(req, ctx) {
      const scope = scopeOf(ctx.values);
      const read = await store.readRevision(
        scope.toStore(req.sessionId, "session_id"),
        fromUint64(req.revision, "revision"),
      );
      return {
        revision: BigInt(read.revision),
        headRevision: BigInt(read.headRevision),
        turnIndex: BigInt(read.turnIndex),
        messages: read.messages,
        metadata: read.metadata,
      };
    },

    async vacuum(req, ctx) {
      const scope = scopeOf(ctx.values);
      const report = await store.vacuum(scope.toStore(req.sessionId, "session_id"));
      return { removedBatches: report.removedBatches, removedInputs: report.removedInputs };
    },
  };
}
