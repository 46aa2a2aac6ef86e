// A RuntimeStore whose every operation is one RPC to LeaseService, QueueService or SessionService:
// the conformance suite runs every store law over it, so the wire keeps the store's semantics for
// workers that bring their own agent loop (they call those services from their own language). Session ids are the caller's client-visible ids; the server scopes them to the
// caller's tenant. Errors come back as the TetherErrors the server's store threw (ADR 0003).
import {
  decisionToProto,
  toolAnswerToProto,
  toolCallStateFromProto,
  waitFromWire,
  waitToWire,
} from "../../src/api/convert/tool-calls.js";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { isTetherError } from "../../src/domain/errors.js";
import type { InputId } from "../../src/domain/ids.js";
import type { LeaseClaimOutcome } from "../../src/domain/lease.js";
import { AgentService } from "../../src/gen/tether/v1/agent_service_pb.js";
import { LeaseService, type ClaimLeaseResponse } from "../../src/gen/tether/v1/lease_service_pb.js";
import { agentFromProto, storedDefinitionToProto } from "../../src/api/convert/agents.js";
import { QueueService } from "../../src/gen/tether/v1/queue_service_pb.js";
import { SessionService } from "../../src/gen/tether/v1/session_service_pb.js";
import type { RuntimeStore } from "../../src/ports/runtime-store.js";
import {
  claimPointToProto,
  deliveryToProto,
  inputClaimFromProto,
  inputFromProto,
} from "../../src/api/convert/inputs.js";
import { fenceToProto, leaseFromProto, ownerToProto } from "../../src/api/convert/lease.js";
import {
  parkDraftToProto,
  parkedFromProto,
  resumeFromProto,
} from "../../src/api/convert/parked-turns.js";
import {
  batchFromProto,
  cancelReportFromProto,
  claimBoundaries,
  claimByIdStatuses,
  draftToProto,
  workClaimFromProto,
} from "../../src/api/convert/queue.js";
import { PASS_THROUGH_IDS as ids, toUint32, toUint64 } from "../../src/api/convert/scalars.js";
import {
  commitToProto,
  receiptFromProto,
  markToProto,
  snapshotFromProto,
} from "../../src/api/convert/session.js";
import { tetherErrorFromConnect } from "../../src/api/errors.js";

export interface WireStoreOptions {
  /** The caller owns the transport (and its connections). */
  transport: Transport;
}

/** Runs one call; a failure comes back as the server's TetherError, always as a rejection. */
async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw tetherErrorFromConnect(error);
  }
}

function claimOutcome(
  res: Pick<ClaimLeaseResponse, "result">,
  reentered: boolean,
  vacant = false,
): LeaseClaimOutcome {
  switch (res.result.case) {
    case "acquired":
      return {
        kind: "acquired",
        lease: leaseFromProto(res.result.value, ids, "acquired"),
        reentered,
        vacant,
      };
    case "busy":
      return { kind: "busy", holder: leaseFromProto(res.result.value, ids, "busy") };
    default:
      throw new Error("the server answered a lease claim with neither acquired nor busy");
  }
}

/** A wire answer report names waits as the wire does (`approve:<call id>`); the port, by call id. */
function reportFromWire(res: { acceptedCallIds: string[]; ignoredCallIds: string[] }) {
  return {
    accepted: res.acceptedCallIds.map((id) => waitFromWire(id).callId),
    ignored: res.ignoredCallIds.map((id) => waitFromWire(id).callId),
  };
}

/** The answer for a session the server does not know, in place of its NOT_FOUND. */
async function orNotFound<T, U>(call: Promise<T>, absent: U): Promise<T | U> {
  try {
    return await call;
  } catch (error) {
    if (isTetherError(tetherErrorFromConnect(error), "session_not_found")) return absent;
    throw error;
  }
}

export function createWireStore(options: WireStoreOptions): RuntimeStore {
  const leases = createClient(LeaseService, options.transport);
  const queue = createClient(QueueService, options.transport);
  const sessions = createClient(SessionService, options.transport);
  const agents = createClient(AgentService, options.transport);

  return {
    commit: (commit) =>
      call(async () => {
        const res = await leases.commit(commitToProto(commit, ids));
        return receiptFromProto(res.receipt, ids);
      }),

    loadSession: (sessionId, since) =>
      call(async () => {
        const res = await leases.loadSession({ sessionId, since: markToProto(since) });
        return snapshotFromProto(res.snapshot, ids, "snapshot");
      }),

    // The API has no batched read (ListSessions does it server-side): the wire client reads each
    // session's parts through LeaseService, which is enough for the laws to judge the result.
    readSessionSummaries: (sessionIds) =>
      call(async () => {
        const read = await Promise.all(
          sessionIds.map(async (sessionId) => {
            const [loaded, lease, parked] = await Promise.all([
              leases.loadSession({ sessionId }),
              leases.getLease({ sessionId }),
              leases.readParkedTurn({ sessionId }),
            ]);
            const snapshot = snapshotFromProto(loaded.snapshot, ids, "snapshot");
            if (snapshot === undefined) return undefined;
            const { messages: _m, messagesFrom: _f, transcriptEpoch: _e, ...counters } = snapshot;
            return {
              ...counters,
              lease: lease.lease ? leaseFromProto(lease.lease, ids, "lease") : undefined,
              parkedTurn: parked.parked ? parkedFromProto(parked.parked, ids, "parked") : undefined,
            };
          }),
        );
        return read.filter((s) => s !== undefined);
      }),

    // DeleteSession answers NOT_FOUND for nothing to delete; the port answers false.
    deleteSession: (sessionId) =>
      call(async () => {
        try {
          await sessions.deleteSession({ sessionId });
          return true;
        } catch (error) {
          if (error instanceof ConnectError && error.code === Code.NotFound) return false;
          throw error;
        }
      }),

    // The cursor is the server's opaque page token; a prefix filters within each page, so a page
    // may hold fewer ids than the limit while more follow.
    listSessions: ({ prefix = "", cursor = "", limit }) =>
      call(async () => {
        const res = await sessions.listSessions({
          pageSize: toUint32(limit, "limit"),
          pageToken: cursor,
        });
        return {
          sessionIds: res.sessions
            .map((s) => ids.toStore(s.sessionId, "session_id"))
            .filter((id) => id.startsWith(prefix)),
          nextCursor: res.nextPageToken,
        };
      }),

    tryClaimLease: (sessionId, owner, ttlMs) =>
      call(async () => {
        const res = await leases.claimLease({
          sessionId,
          owner: ownerToProto(owner),
          ttlMs: toUint64(ttlMs, "ttl_ms"),
        });
        return claimOutcome(res, res.reentered, res.vacant);
      }),

    renewLease: (fence, ttlMs) =>
      call(async () => {
        const res = await leases.renewLease({
          fence: fenceToProto(fence, ids, "fence"),
          ttlMs: toUint64(ttlMs, "ttl_ms"),
        });
        return leaseFromProto(res.lease, ids, "lease");
      }),

    renewLeases: (fences, ttlMs) =>
      call(async () => {
        const res = await leases.renewLeases({
          fences: fences.map((f, i) => fenceToProto(f, ids, `fences[${i}]`)),
          ttlMs: toUint64(ttlMs, "ttl_ms"),
        });
        return res.renewals.map((r) =>
          r.renewed
            ? { kind: "renewed" as const, expiresAtMs: Number(r.expiresAtMs) }
            : { kind: "expired" as const },
        );
      }),

    releaseLease: (fence) =>
      call(async () => {
        const res = await leases.releaseLease({ fence: fenceToProto(fence, ids, "fence") });
        return res.released ? { kind: "released" } : { kind: "not_held" };
      }),

    releaseIfIdle: (fence) =>
      call(async () => {
        const res = await leases.releaseLease({
          fence: fenceToProto(fence, ids, "fence"),
          onlyIfIdle: true,
        });
        if (res.pending) return { kind: "pending" };
        return res.released ? { kind: "released" } : { kind: "not_held" };
      }),

    reclaimLease: (sessionId, claimant, observed, ttlMs) =>
      call(async () => {
        const res = await leases.reclaimLease({
          sessionId,
          claimant: ownerToProto(claimant),
          observed: fenceToProto(observed, ids, "observed"),
          ttlMs: toUint64(ttlMs, "ttl_ms"),
        });
        return claimOutcome(res, false);
      }),

    currentLease: (sessionId) =>
      call(async () => {
        const res = await leases.getLease({ sessionId });
        return res.lease ? leaseFromProto(res.lease, ids, "lease") : undefined;
      }),

    enqueueWork: (draft) =>
      call(async () => {
        const res = await queue.enqueueWork({ draft: draftToProto(draft, ids) });
        return { batch: batchFromProto(res.batch, ids, "batch"), deduplicated: res.deduplicated };
      }),

    // QueueService answers NOT_FOUND for a session that does not exist (ADR 0003); the port
    // answers with what such a session holds: nothing, and every named id not found.
    // The port lists everything; the wire answers in pages, so every page is read.
    listWork: (sessionId) =>
      call(async () => {
        const batches = [];
        let pageToken = "";
        do {
          const res = await orNotFound(queue.listWork({ sessionId, pageToken }), {
            batches: [],
            nextPageToken: "",
          });
          batches.push(...res.batches);
          pageToken = res.nextPageToken;
        } while (pageToken !== "");
        return batches.map((b, i) => batchFromProto(b, ids, `batches[${i}]`));
      }),

    cancelWork: (sessionId, batchIds) =>
      call(async () => {
        const res = await orNotFound(queue.cancelWork({ sessionId, batchIds }), undefined);
        if (!res) return { outcomes: batchIds.map((id) => ({ id, status: "not_found" as const })) };
        return cancelReportFromProto(res.outcomes, "outcomes");
      }),

    claimReadyWork: (fence, boundary, maxBatches) =>
      call(async () => {
        const res = await leases.claimReadyWork({
          fence: fenceToProto(fence, ids, "fence"),
          boundary: claimBoundaries.toProto(boundary),
          maxBatches: toUint32(maxBatches, "max_batches"),
        });
        return workClaimFromProto(res.claim, ids, "claim");
      }),

    claimWorkByIds: (fence, batchIds) =>
      call(async () => {
        const res = await leases.claimWorkByIds({
          fence: fenceToProto(fence, ids, "fence"),
          batchIds,
        });
        return {
          claim: workClaimFromProto(res.claim, ids, "claim"),
          statuses: res.outcomes.map((o, i) => ({
            batchId: o.batchId as (typeof batchIds)[number],
            status: claimByIdStatuses.fromProto(o.status, `outcomes[${i}].status`),
          })),
        };
      }),

    submitInput: (draft) =>
      call(async () => {
        // The submitter's trace travels as the call's own traceparent: a traced server keeps
        // its SubmitInput span (a child of it) with the input; an untraced one keeps none.
        const res = await queue.submitInput(
          {
            sessionId: ids.toClient(draft.sessionId),
            delivery: deliveryToProto(draft.delivery),
            sourceKey: draft.sourceKey ?? "",
            payload: draft.payload,
          },
          draft.trace === undefined ? {} : { headers: { traceparent: draft.trace } },
        );
        return {
          input: inputFromProto(res.input, ids, "input"),
          deduplicated: res.deduplicated,
          sessionBusy: res.sessionBusy,
        };
      }),

    listInputs: (sessionId) =>
      call(async () => {
        const inputs = [];
        let pageToken = "";
        do {
          const res = await orNotFound(queue.listInputs({ sessionId, pageToken }), {
            inputs: [],
            nextPageToken: "",
          });
          inputs.push(...res.inputs);
          pageToken = res.nextPageToken;
        } while (pageToken !== "");
        return inputs.map((i, n) => inputFromProto(i, ids, `inputs[${n}]`));
      }),

    cancelInputs: (sessionId, selector) =>
      call(async () => {
        const res = await orNotFound(
          queue.cancelInputs({
            sessionId,
            selector:
              selector.kind === "ids"
                ? { case: "inputIds", value: { ids: selector.inputIds } }
                : { case: "fromInputId", value: selector.fromInputId },
          }),
          undefined,
        );
        if (!res) {
          const named = selector.kind === "ids" ? selector.inputIds : [selector.fromInputId];
          return { outcomes: named.map((id) => ({ id, status: "not_found" as const })) };
        }
        return cancelReportFromProto<InputId>(res.outcomes, "outcomes");
      }),

    claimInputs: (fence, point, maxInputs) =>
      call(async () => {
        const res = await leases.claimInputs({
          fence: fenceToProto(fence, ids, "fence"),
          ...claimPointToProto(point),
          maxInputs: toUint32(maxInputs, "max_inputs"),
        });
        return inputClaimFromProto(res.claim, ids, "claim");
      }),

    deferActiveInputs: (fence, turnId) =>
      call(async () => {
        const res = await leases.deferActiveInputs({
          fence: fenceToProto(fence, ids, "fence"),
          turnId,
        });
        return { deferredInputIds: res.deferredInputIds as InputId[] };
      }),

    recordToolCalls: (fence, turnId, waits) =>
      call(async () => {
        const res = await leases.recordToolCalls({
          fence: fenceToProto(fence, ids, "fence"),
          turnId,
          callIds: waits.map(waitToWire),
        });
        return res.calls.map((c, i) => toolCallStateFromProto(c, `calls[${i}]`));
      }),

    answerToolCalls: (sessionId, turnId, answers) =>
      call(async () => {
        const res = await leases.answerToolCalls({
          sessionId,
          turnId,
          answers: answers.map(toolAnswerToProto),
        });
        return reportFromWire(res);
      }),

    decideApprovals: (sessionId, turnId, decisions) =>
      call(async () => {
        const res = await leases.answerToolCalls({
          sessionId,
          turnId,
          answers: decisions.map(decisionToProto),
        });
        return reportFromWire(res);
      }),

    closeToolCalls: (fence, turnId, waits) =>
      call(async () => {
        const res = await leases.closeToolCalls({
          fence: fenceToProto(fence, ids, "fence"),
          turnId,
          callIds: (waits ?? []).map(waitToWire),
          allCalls: waits === undefined,
        });
        return res.calls.map((c, i) => toolCallStateFromProto(c, `calls[${i}]`));
      }),

    readToolCalls: (sessionId, turnId) =>
      call(async () => {
        const res = await leases.readToolCalls({ sessionId, turnId });
        return res.calls.map((c, i) => toolCallStateFromProto(c, `calls[${i}]`));
      }),

    parkTurn: (fence, draft) =>
      call(async () => {
        const res = await leases.parkTurn({
          fence: fenceToProto(fence, ids, "fence"),
          ...parkDraftToProto(draft),
        });
        return { resumable: res.resumable, expiresAtMs: Number(res.expiresAtMs) };
      }),

    resumeTurn: (fence, turnId) =>
      call(async () => {
        const res = await leases.resumeTurn({ fence: fenceToProto(fence, ids, "fence"), turnId });
        return resumeFromProto(res, ids);
      }),

    cancelParkedTurn: (sessionId, turnId) =>
      call(async () => {
        const res = await leases.cancelParkedTurn({ sessionId, turnId: turnId ?? "" });
        return res.cancelled;
      }),

    readParkedTurn: (sessionId) =>
      call(async () => {
        const res = await leases.readParkedTurn({ sessionId });
        return res.parked ? parkedFromProto(res.parked, ids, "parked") : undefined;
      }),

    createAgent: (draft) =>
      call(async () => {
        const res = await agents.createAgent({
          agentId: draft.agentId,
          displayName: draft.displayName,
          definition: storedDefinitionToProto(draft.definition),
        });
        return agentFromProto(res.agent, ids);
      }),

    updateAgent: (update) =>
      call(async () => {
        const res = await agents.updateAgent({
          agentId: update.agentId,
          expectedVersion: BigInt(update.expectedVersion),
          displayName: update.displayName,
          definition: storedDefinitionToProto(update.definition),
        });
        return agentFromProto(res.agent, ids);
      }),

    getAgent: (agentId, version) =>
      call(async () => {
        try {
          const res = await agents.getAgent({ agentId, version: BigInt(version ?? 0) });
          return agentFromProto(res.agent, ids);
        } catch (error) {
          if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
          throw error;
        }
      }),

    // The API lists a tenant's agents without a prefix: this double pages through all of them and
    // applies the store's prefix, cursor and limit itself.
    listAgents: (o) =>
      call(async () => {
        const all = [];
        let pageToken = "";
        do {
          const res = await agents.listAgents({ pageSize: 1000, pageToken });
          all.push(...res.agents.map((a) => agentFromProto(a, ids)));
          pageToken = res.nextPageToken;
        } while (pageToken !== "");
        const matching = all.filter(
          (a) =>
            (o.prefix === undefined || a.agentId.startsWith(o.prefix)) &&
            (o.cursor === undefined || a.agentId > o.cursor),
        );
        const page = matching.slice(0, o.limit);
        return {
          agents: page,
          nextCursor: matching.length > o.limit ? page.at(-1)?.agentId : undefined,
        };
      }),

    deleteAgent: (agentId) => call(async () => (await agents.deleteAgent({ agentId })).deleted),

    readRevision: (sessionId, revision) =>
      call(async () => {
        const res = await leases.readRevision({ sessionId, revision: BigInt(revision) });
        return {
          sessionId,
          revision: Number(res.revision),
          headRevision: Number(res.headRevision),
          turnIndex: Number(res.turnIndex),
          messages: res.messages,
          metadata: res.metadata,
        };
      }),

    forkSession: (draft) =>
      call(async () => {
        const res = await sessions.forkSession({
          sessionId: draft.sourceId,
          atRevision: BigInt(draft.atRevision),
          newSessionId: draft.targetId,
        });
        return { sessionId: draft.targetId, headRevision: Number(res.session?.headRevision) };
      }),

    rewindSession: (draft) =>
      call(async () => {
        const res = await sessions.rewindSession({
          sessionId: draft.sessionId,
          toRevision: BigInt(draft.toRevision),
          expectedHeadRevision: BigInt(draft.expectedHeadRevision),
        });
        return { sessionId: draft.sessionId, headRevision: Number(res.session?.headRevision) };
      }),

    vacuum: (sessionId) =>
      call(async () => {
        const res = await leases.vacuum({ sessionId });
        return { removedBatches: res.removedBatches, removedInputs: res.removedInputs };
      }),

    close: () => Promise.resolve(),
  };
}
