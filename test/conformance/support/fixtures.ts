// Owners, drafts and commits the laws are written with. Every test takes a fresh session id, so
// backends that share one server across tests never see another test's keys.
import { randomUUID } from "node:crypto";
import { parseSessionId, type SessionId } from "../../../src/domain/ids.js";
import type { InputDelivery, TurnCheckpoint, TurnInputDraft } from "../../../src/domain/inputs.js";
import type { LeaseOwner } from "../../../src/domain/lease.js";
import type { ParkTurnDraft } from "../../../src/domain/parked-turns.js";
import type { QueuedWorkDraft } from "../../../src/domain/queue.js";
import type { RuntimeCommit } from "../../../src/domain/session.js";
import { currentLiveness } from "../../../src/store/shared/local-process.js";

/** Long enough that no test outlives it. */
export const LONG_TTL_MS = 60_000;
/** Short enough that a real-time backend expires it quickly. */
export const SHORT_TTL_MS = 150;
/** Comfortably past SHORT_TTL_MS, so a real-time backend has surely expired the lease. */
export const PAST_SHORT_TTL_MS = 300;

export function freshSessionId(): SessionId {
  return parseSessionId(`conf-${randomUUID()}`);
}

export function opaqueOwner(name: string, incarnation = "inc-1"): LeaseOwner {
  return {
    ownerId: `owner-${name}`,
    incarnationId: `owner-${name}:${incarnation}`,
    liveness: { kind: "opaque" },
  };
}

export const CONFORMANCE_HOST = "conformance-host";
export const CONFORMANCE_BOOT = "conformance-boot";

/**
 * A local-process holder whose pid is this test process but whose recorded start time is not:
 * the pid was "reused", so the holder is provably dead to a claimant on the same host and boot.
 */
export function deadLocalOwner(
  name: string,
  hostId = CONFORMANCE_HOST,
  bootId = CONFORMANCE_BOOT,
): LeaseOwner {
  return {
    ownerId: `owner-${name}`,
    incarnationId: `owner-${name}:inc-1`,
    liveness: {
      kind: "local_process",
      hostId,
      bootId,
      pid: process.pid,
      processStart: "not-the-current-process-start",
    },
  };
}

/** A local-process claimant on the given host and boot. */
export function localClaimant(
  name: string,
  hostId = CONFORMANCE_HOST,
  bootId = CONFORMANCE_BOOT,
): LeaseOwner {
  return {
    ownerId: `owner-${name}`,
    incarnationId: `owner-${name}:inc-1`,
    liveness: {
      kind: "local_process",
      hostId,
      bootId,
      pid: process.pid,
      processStart: "conformance-claimant-start",
    },
  };
}

/** A holder that is this very process, as the OS reports it: alive by construction. */
export function liveLocalOwner(name: string): LeaseOwner {
  return {
    ownerId: `owner-${name}`,
    incarnationId: `owner-${name}:inc-1`,
    liveness: currentLiveness(),
  };
}

/** A claimant on the same host and boot as `liveLocalOwner`. */
export function claimantBesideThisProcess(name: string): LeaseOwner {
  const live = currentLiveness();
  if (live.kind !== "local_process") return opaqueOwner(name);
  return localClaimant(name, live.hostId, live.bootId);
}

type WorkOptions = Partial<Omit<QueuedWorkDraft, "sessionId" | "payload">>;

/** Defaults: turn work, earliest safe boundary, exclusive. */
export function workDraft(
  session: SessionId,
  payload: string,
  options: WorkOptions = {},
): QueuedWorkDraft {
  return {
    sessionId: session,
    workClass: "turn_work",
    deliveryPolicy: "earliest_safe_boundary",
    slotPolicy: "exclusive",
    payload,
    ...options,
  };
}

export function joinDraft(
  session: SessionId,
  payload: string,
  mergeKey: string,
  options: WorkOptions = {},
): QueuedWorkDraft {
  return workDraft(session, payload, { slotPolicy: "join", mergeKey, ...options });
}

export const NEXT_TURN: InputDelivery = { kind: "next_turn" };

export function activeTurn(turnId: string, minBoundary: TurnCheckpoint): InputDelivery {
  return { kind: "active_turn", turnId, minBoundary };
}

export function inputDraft(
  session: SessionId,
  payload: string,
  delivery: InputDelivery = NEXT_TURN,
  sourceKey?: string,
): TurnInputDraft {
  return sourceKey === undefined
    ? { sessionId: session, delivery, payload }
    : { sessionId: session, delivery, payload, sourceKey };
}

export function commitDraft(
  session: SessionId,
  expectedHeadRevision: number,
  extra: Partial<Omit<RuntimeCommit, "sessionId" | "expectedHeadRevision">> = {},
): RuntimeCommit {
  return { sessionId: session, expectedHeadRevision, appendMessages: [], ...extra };
}

/** A turn parked on one client call, holding no claims: a session some turn holds without a lease. */
export function waitingTurn(turnId: string): ParkTurnDraft {
  return {
    turnId,
    waitingOn: [{ kind: "result", callId: "c1" }],
    progress: "{}",
    inputIds: [],
    batchIds: [],
    ttlMs: LONG_TTL_MS,
  };
}
