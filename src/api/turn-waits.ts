// LeaseService's RPCs over a turn's waits, for workers that bring their own agent loop: the tool
// calls a turn waits on (recorded, answered, closed, read) and the turn parked while it waits
// (park, resume, cancel, read). Like the rest of LeaseService, each is one store call that the
// store judges; this layer converts and scopes session ids to the caller's tenant.
import type { ServiceImpl } from "@connectrpc/connect";
import type { LeaseService } from "../gen/tether/v1/lease_service_pb.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { fenceFromProto } from "./convert/lease.js";
import { parkDraftFromProto, parkedToProto, resumeToProto } from "./convert/parked-turns.js";
import {
  toolAnswerFromProto,
  toolCallStateToProto,
  waitFromWire,
  waitToWire,
} from "./convert/tool-calls.js";
import { scopeOf } from "./tenancy.js";

type TurnWaitRpcs = Pick<
  ServiceImpl<typeof LeaseService>,
  | "recordToolCalls"
  | "answerToolCalls"
  | "closeToolCalls"
  | "readToolCalls"
  | "parkTurn"
  | "resumeTurn"
  | "cancelParkedTurn"
  | "readParkedTurn"
>;

export function createTurnWaitRpcs(store: RuntimeStore): TurnWaitRpcs {
  return {
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
  };
}
