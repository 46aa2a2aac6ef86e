// LeaseService over a RuntimeStore: the store's lease, claim and commit operations for workers
// that bring their own agent loop. Each RPC is one store call; the store stays the judge of every
// law, this layer only converts and scopes session ids to the caller's tenant.
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
import { parkDraftFromProto, parkedToProto, resumeToProto } from "./convert/parked-turns.js";
import { scopeOf } from "./tenancy.js";
import {
  toolAnswerFromProto,
  toolCallStateToProto,
  waitFromWire,
  waitToWire,
} from "./convert/tool-calls.js";

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

    async recordToolCalls(req, ctx) {
      const scope = scopeOf(ctx.values);
      const fence = fenceFromProto(req.fence, scope, "fence");
      const states = await store.recordToolCalls(fence, req.turnId, req.callIds.map(waitFromWire));
      return { calls: states.map(toolCallStateToProto) };
    },

    async answerToolCalls(req, ctx) {
      const scope = scopeOf(ctx.values);
      const sessionId = scope.toStore(req.sessionId, "session_id");
      // Results and decisions share the wire's one answer list (a decision names its approval):
      // each kind goes to its own store operation, and the report names waits as the wire does.
      const wire = req.answers.map(toolAnswerFromProto);
      const results = wire.flatMap((a) => (a.kind === "result" ? [a.answer] : []));
      const decisions = wire.flatMap((a) => (a.kind === "approval" ? [a.decision] : []));
      const accepted: string[] = [];
      const ignored: string[] = [];
      if (results.length > 0 || decisions.length === 0) {
        const report = await store.answerToolCalls(sessionId, req.turnId, results);
        accepted.push(...report.accepted.map((callId) => waitToWire({ kind: "result", callId })));
        ignored.push(...report.ignored.map((callId) => waitToWire({ kind: "result", callId })));
      }
      if (decisions.length > 0) {
        const report = await store.decideApprovals(sessionId, req.turnId, decisions);
        accepted.push(...report.accepted.map((callId) => waitToWire({ kind: "approval", callId })));
        ignored.push(...report.ignored.map((callId) => waitToWire({ kind: "approval", callId })));
      }
      return { acceptedCallIds: accepted, ignoredCallIds: ignored };
    },

    async closeToolCalls(req, ctx) {
      const scope = scopeOf(ctx.values);
      const fence = fenceFromProto(req.fence, scope, "fence");
      const named = req.allCalls ? undefined : req.callIds.map(waitFromWire);
      const states = await store.closeToolCalls(fence, req.turnId, named);
      return { calls: states.map(toolCallStateToProto) };
    },

    async readToolCalls(req, ctx) {
      const scope = scopeOf(ctx.values);
      const states = await store.readToolCalls(
        scope.toStore(req.sessionId, "session_id"),
        req.turnId,
      );
      return { calls: states.map(toolCallStateToProto) };
    },

    async parkTurn(req, ctx) {
      const scope = scopeOf(ctx.values);
      const fence = fenceFromProto(req.fence, scope, "fence");
      const receipt = await store.parkTurn(fence, parkDraftFromProto(req));
      return { resumable: receipt.resumable, expiresAtMs: BigInt(receipt.expiresAtMs) };
    },

    async resumeTurn(req, ctx) {
      const scope = scopeOf(ctx.values);
      const fence = fenceFromProto(req.fence, scope, "fence");
      return resumeToProto(await store.resumeTurn(fence, req.turnId), scope);
    },

    async cancelParkedTurn(req, ctx) {
      const scope = scopeOf(ctx.values);
      const cancelled = await store.cancelParkedTurn(
        scope.toStore(req.sessionId, "session_id"),
        req.turnId === "" ? undefined : req.turnId,
      );
      return { cancelled };
    },

    async readParkedTurn(req, ctx) {
      const scope = scopeOf(ctx.values);
      const parked = await store.readParkedTurn(scope.toStore(req.sessionId, "session_id"));
      return parked ? { parked: parkedToProto(parked, scope) } : {};
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
