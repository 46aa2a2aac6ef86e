// Typed domain errors. Every failure a caller can act on has a code here; the API edge maps codes
// to gRPC status in one table, so no raw Redis or runtime message ever reaches a client.

export type TetherErrorCode =
  | "invalid_argument"
  | "session_not_found"
  | "head_revision_conflict"
  | "head_revision_contended"
  | "commit_stamp_conflict"
  | "session_mismatch"
  | "session_execution_lease_expired"
  | "queued_work_claim_superseded"
  | "turn_input_claim_superseded"
  | "source_key_conflict"
  | "unknown_batch_ids"
  | "session_busy"
  | "turn_not_running"
  | "session_already_exists"
  | "agent_not_found"
  | "agent_already_exists"
  | "agent_version_conflict"
  | "schedule_not_found"
  | "schedule_already_exists"
  | "webhook_endpoint_not_found"
  | "webhook_endpoint_already_exists"
  | "revision_out_of_range"
  | "revision_unavailable"
  | "response_too_large"
  | "turn_in_progress"
  | "quota_exhausted"
  | "permission_denied"
  | "unauthenticated"
  | "deadline_exceeded"
  | "unknown_service"
  | "route_not_found"
  | "turn_not_found"
  | "item_not_found"
  | "server_shutting_down"
  | "store_unavailable"
  | "replication_unconfirmed"
  | "internal";

/** Whether retrying the same call, unchanged, may succeed. */
export type ErrorClass = "terminal" | "retryable";

export interface FieldViolation {
  field: string;
  description: string;
}

export interface TetherErrorOptions {
  fields?: Record<string, unknown>;
  violations?: FieldViolation[];
  cause?: unknown;
}

// A replica going away is as transient as a store outage: another replica can take the call.
const RETRYABLE: ReadonlySet<TetherErrorCode> = new Set([
  "store_unavailable",
  "server_shutting_down",
  "head_revision_contended",
  "replication_unconfirmed",
  // A tenant's quota frees with time (its window) or as its turns end.
  "quota_exhausted",
]);

export class TetherError extends Error {
  readonly code: TetherErrorCode;
  readonly classification: ErrorClass;
  /** Structured context (ids, revisions, tokens) for logs and error details. */
  readonly fields: Record<string, unknown>;
  readonly violations: FieldViolation[];

  constructor(code: TetherErrorCode, message: string, options: TetherErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "TetherError";
    this.code = code;
    this.classification = RETRYABLE.has(code) ? "retryable" : "terminal";
    this.fields = options.fields ?? {};
    this.violations = options.violations ?? [];
  }
}

export function isTetherError(value: unknown, code?: TetherErrorCode): value is TetherError {
  return value instanceof TetherError && (code === undefined || value.code === code);
}

export function invalidArgument(field: string, description: string): TetherError {
  return new TetherError("invalid_argument", `${field}: ${description}`, {
    violations: [{ field, description }],
    fields: { field },
  });
}

export function sessionNotFound(sessionId: string): TetherError {
  return new TetherError("session_not_found", `session ${sessionId} not found`, {
    fields: { sessionId },
  });
}

export function headRevisionConflict(
  sessionId: string,
  expected: number,
  actual: number,
): TetherError {
  return new TetherError(
    "head_revision_conflict",
    `session ${sessionId}: commit expected head revision ${expected} but the head is ${actual}`,
    { fields: { sessionId, expected, actual } },
  );
}

/**
 * An update that asked for no compare-and-set lost the race for the head to other commits on every
 * attempt it had: nothing was applied, and the same call may succeed once the session is quieter.
 */
export function headRevisionContended(sessionId: string, attempts: number): TetherError {
  return new TetherError(
    "head_revision_contended",
    `session ${sessionId}: the update lost the head revision to concurrent commits ${attempts} times in a row and was not applied; retry it`,
    { fields: { sessionId, attempts } },
  );
}

export function commitStampConflict(sessionId: string, operationId: string): TetherError {
  return new TetherError(
    "commit_stamp_conflict",
    `session ${sessionId}: operation ${operationId} was already committed with other content`,
    { fields: { sessionId, operationId } },
  );
}

export function sessionMismatch(sessionId: string, field: string, other: string): TetherError {
  return new TetherError(
    "session_mismatch",
    `${field} names session ${other}, but the operation is for session ${sessionId}`,
    {
      fields: { sessionId, other, field },
      violations: [{ field, description: "names another session" }],
    },
  );
}

/**
 * Tool answers for a turn that waits for none: it never asked for a client tool, or its records
 * expired. Names the turn only: the store's session id carries the tenant (ADR 0003).
 */
export function turnNotRunning(_sessionId: string, turnId: string): TetherError {
  return new TetherError("turn_not_running", `turn ${turnId} is not waiting for tool results`, {
    fields: { turnId },
  });
}

/** Answers for a turn that already committed: it is neither running nor parked. */
export function turnCompleted(turnId: string): TetherError {
  return new TetherError(
    "turn_not_running",
    `turn ${turnId} has completed: it takes no more tool results or decisions`,
    { fields: { turnId } },
  );
}

/** A commit or park names a parked turn the session does not have (another one, or none). */
export function parkedTurnMismatch(turnId: string, parkedTurnId: string | undefined): TetherError {
  const actual = parkedTurnId === undefined ? "no parked turn" : `turn ${parkedTurnId} parked`;
  return new TetherError(
    "turn_not_running",
    `turn ${turnId} is not parked (the session has ${actual})`,
    {
      fields: { turnId, parkedTurnId },
    },
  );
}

export function leaseExpired(sessionId: string, fencingToken: number): TetherError {
  return new TetherError(
    "session_execution_lease_expired",
    `session ${sessionId}: the lease with fencing token ${fencingToken} is no longer held`,
    { fields: { sessionId, fencingToken } },
  );
}

export function queuedWorkClaimSuperseded(sessionId: string, claimId: string): TetherError {
  return new TetherError(
    "queued_work_claim_superseded",
    `session ${sessionId}: queued-work claim ${claimId} was superseded by a newer lease generation`,
    { fields: { sessionId, claimId } },
  );
}

export function turnInputClaimSuperseded(sessionId: string, claimId: string): TetherError {
  return new TetherError(
    "turn_input_claim_superseded",
    `session ${sessionId}: turn-input claim ${claimId} was superseded by a newer lease generation`,
    { fields: { sessionId, claimId } },
  );
}

export function sourceKeyConflict(sessionId: string, sourceKey: string): TetherError {
  return new TetherError(
    "source_key_conflict",
    `session ${sessionId}: source key ${sourceKey} was already used with other content`,
    { fields: { sessionId, sourceKey } },
  );
}

/**
 * An `Idempotency-Key` held by an earlier request with another body. The source key's code: the
 * door's key is an input's source key on POST /events, so one code says "this key was used with
 * other content" on every POST.
 */
export function idempotencyKeyConflict(key: string): TetherError {
  return new TetherError(
    "source_key_conflict",
    `Idempotency-Key ${key} was already used with another request body`,
    { fields: { idempotencyKey: key } },
  );
}

export function unknownBatchIds(sessionId: string, batchIds: string[]): TetherError {
  return new TetherError(
    "unknown_batch_ids",
    `session ${sessionId}: unknown batch ids ${batchIds.join(", ")}`,
    {
      fields: { sessionId, batchIds },
      violations: [{ field: "batch_ids", description: "unknown" }],
    },
  );
}

export function storeUnavailable(message: string, cause?: unknown): TetherError {
  return new TetherError("store_unavailable", `store unavailable: ${message}`, { cause });
}

/**
 * TETHER_REDIS_DURABILITY=replicated: the write ran on the Redis primary, but fewer replicas than
 * required confirmed it in time, so it is not acknowledged. Retrying with the same idempotency key
 * answers from what the first attempt stored (it never applies twice).
 */
/** `of`: a write (retried with its idempotency key) or a read (what it saw, not yet replicated). */
export function replicationUnconfirmed(
  required: number,
  confirmed: number,
  timeoutMs: number,
  of: "write" | "read" = "write",
): TetherError {
  const what =
    of === "write" ? "the write" : "what the read saw (a failover could still take it back)";
  const retry = of === "write" ? "retry with the same idempotency key" : "retry the read";
  return new TetherError(
    "replication_unconfirmed",
    `store unavailable: durability "replicated" needs ${required} Redis replica(s) to confirm ${what}, ${confirmed} did within ${timeoutMs} ms; ${retry}`,
    { fields: { durability: "replicated", required, confirmed, timeoutMs } },
  );
}

export function sessionAlreadyExists(sessionId: string): TetherError {
  return new TetherError("session_already_exists", `session ${sessionId} already exists`, {
    fields: { sessionId },
  });
}

export function unauthenticated(message: string): TetherError {
  return new TetherError("unauthenticated", message);
}

export function deadlineExceeded(): TetherError {
  return new TetherError("deadline_exceeded", "the request's deadline passed");
}

/** grpc.health.v1 Check of a service this server does not report on. */
export function unknownService(service: string): TetherError {
  return new TetherError("unknown_service", `unknown service ${service}`, { fields: { service } });
}

/** A caller asked for another tenant's data it may not read (GetQuotaUsage). */
export function permissionDenied(field: string, description: string): TetherError {
  return new TetherError("permission_denied", `${field}: ${description}`, { fields: { field } });
}

export function serverShuttingDown(): TetherError {
  return new TetherError("server_shutting_down", "the server is shutting down");
}

export function revisionOutOfRange(
  sessionId: string,
  field: string,
  revision: number,
  head: number,
): TetherError {
  return new TetherError(
    "revision_out_of_range",
    `${field}: revision ${revision} is past the head of session ${sessionId} (${head})`,
    {
      fields: { sessionId, revision, headRevision: head },
      violations: [{ field, description: `past the head (${head})` }],
    },
  );
}

/**
 * A revision the session does not hold: one before the revision a fork started from (the source
 * session holds it), or one committed before the store kept history (an older version).
 */
/**
 * An answer that would pass the server's response limit: refused naming the request field that
 * asked for it, with what to do instead (`remedy`, e.g. the RPC that pages the same content).
 */
export function responseTooLarge(
  field: string,
  sizeBytes: number,
  limitBytes: number,
  remedy: string,
): TetherError {
  const description =
    `the answer (${sizeBytes} bytes) would pass the response limit of ${limitBytes} bytes ` +
    `(TETHER_MAX_MESSAGE_BYTES); ${remedy}`;
  return new TetherError("response_too_large", `${field}: ${description}`, {
    violations: [{ field, description }],
    fields: { field, sizeBytes, limitBytes },
  });
}

export function revisionUnavailable(
  sessionId: string,
  field: string,
  revision: number,
  firstKept: number,
): TetherError {
  return new TetherError(
    "revision_unavailable",
    `${field}: session ${sessionId} keeps its history from revision ${firstKept}, not ${revision}`,
    { fields: { sessionId, revision, firstKeptRevision: firstKept } },
  );
}

/** A change that needs the session at rest: a turn runs (a lease is live) or waits parked. */
export function turnInProgress(sessionId: string, what: string): TetherError {
  return new TetherError(
    "turn_in_progress",
    `session ${sessionId} has a turn in progress (${what}): try again once it has ended`,
    { fields: { sessionId } },
  );
}
