// The ONE table from TetherError codes to gRPC status codes (ADR 0003), and the edge that applies
// it: every error a service throws leaves as a ConnectError carrying google.rpc.ErrorInfo (the
// TetherError code as reason) and, when fields were refused, google.rpc.BadRequest. Errors that
// are not TetherErrors become INTERNAL with a generic message; their detail only reaches the log.
import type { DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { TetherError, type TetherErrorCode } from "../domain/errors.js";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  QuotaFailureSchema,
  RetryInfoSchema,
} from "../gen/google/rpc/error_details_pb.js";
import { observeStream } from "./observed-stream.js";
import { tenantKey } from "./tenancy.js";

/** Exhaustive on purpose: a new TetherError code does not compile until it has a status here. */
export const STATUS_OF: Readonly<Record<TetherErrorCode, Code>> = {
  invalid_argument: Code.InvalidArgument,
  session_mismatch: Code.InvalidArgument,
  session_not_found: Code.NotFound,
  unknown_batch_ids: Code.NotFound,
  head_revision_conflict: Code.Aborted,
  head_revision_contended: Code.Unavailable,
  queued_work_claim_superseded: Code.Aborted,
  turn_input_claim_superseded: Code.Aborted,
  commit_stamp_conflict: Code.AlreadyExists,
  source_key_conflict: Code.AlreadyExists,
  session_execution_lease_expired: Code.FailedPrecondition,
  session_busy: Code.Aborted,
  turn_not_running: Code.FailedPrecondition,
  session_already_exists: Code.AlreadyExists,
  agent_not_found: Code.NotFound,
  agent_already_exists: Code.AlreadyExists,
  webhook_endpoint_not_found: Code.NotFound,
  webhook_endpoint_already_exists: Code.AlreadyExists,
  agent_version_conflict: Code.Aborted,
  schedule_not_found: Code.NotFound,
  schedule_already_exists: Code.AlreadyExists,
  revision_out_of_range: Code.OutOfRange,
  revision_unavailable: Code.FailedPrecondition,
  // Not RESOURCE_EXHAUSTED: that code is the quota's, which clients retry after a delay; the
  // same request can never succeed, only another (paged) one.
  response_too_large: Code.FailedPrecondition,
  turn_in_progress: Code.FailedPrecondition,
  quota_exhausted: Code.ResourceExhausted,
  permission_denied: Code.PermissionDenied,
  unauthenticated: Code.Unauthenticated,
  deadline_exceeded: Code.DeadlineExceeded,
  unknown_service: Code.NotFound,
  route_not_found: Code.NotFound,
  turn_not_found: Code.NotFound,
  item_not_found: Code.NotFound,
  server_shutting_down: Code.Unavailable,
  store_unavailable: Code.Unavailable,
  replication_unconfirmed: Code.Unavailable,
  internal: Code.Internal,
};

/**
 * Every message the edge may attach as an error detail. Reflection serves their descriptors too:
 * no service imports them, yet a client (grpcurl) needs them to decode the details.
 */
export const ERROR_DETAIL_MESSAGES: readonly DescMessage[] = [
  ErrorInfoSchema,
  BadRequestSchema,
  QuotaFailureSchema,
  RetryInfoSchema,
];

/** ErrorInfo.domain of every Tether error. */
export const ERROR_DOMAIN = "tether.dev";
const GENERIC_INTERNAL = "internal error";

/** Where the edge reports failures it hides from the client. */
export interface ErrorLog {
  error(record: Record<string, unknown>, message: string): void;
  /** A client that went away mid-call: an ordinary event, so quiet and without a stack. */
  debug?(record: Record<string, unknown>, message: string): void;
}

/**
 * What Node's streams and sockets throw when the peer is gone (cancelled, reset, disconnected).
 * Any client can cause these at will, so they are never logged as server failures.
 */
const CLIENT_GONE_CODES = new Set([
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_STREAM_DESTROYED",
  "ERR_STREAM_WRITE_AFTER_END",
  "ERR_HTTP2_INVALID_STREAM",
  "ERR_HTTP2_STREAM_CANCEL",
  "ECONNRESET",
  "EPIPE",
]);

function clientGone(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && CLIENT_GONE_CODES.has(code)) return code;
  return (error as { name?: unknown }).name === "AbortError" ? "AbortError" : undefined;
}

/** The client left: logged at debug by its code alone; the status goes nowhere but is Canceled. */
function leftEarly(error: unknown, reason: string, log: ErrorLog): ConnectError {
  log.debug?.({ reason }, "client left the call");
  return new ConnectError("the client left the call", Code.Canceled, undefined, undefined, error);
}

const reasonOf = (code: TetherErrorCode): string => code.toUpperCase();

function isTetherCode(value: string): value is TetherErrorCode {
  return Object.hasOwn(STATUS_OF, value);
}

/** Store ids carry the tenant prefix; the client only ever sees its own ids. */
export function stripTenant(text: string, tenant: string | undefined): string {
  return tenant === undefined ? text : text.split(`${tenant}:`).join("");
}

function metadataOf(fields: Record<string, unknown>, tenant: string | undefined) {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    metadata[key] = stripTenant(text, tenant);
  }
  return metadata;
}

/**
 * The wire form of one TetherError (any code but `internal`, whose detail belongs in the log only):
 * its status from the table, ErrorInfo, and BadRequest when fields were refused. Exported for the interceptors that run outside the error interceptor
 * (auth, default deadlines) and for the server's shutdown reason, so they build no status of their own.
 */
export function connectErrorOf(error: TetherError, tenant?: string): ConnectError {
  const details: ConstructorParameters<typeof ConnectError>[3] = [
    {
      desc: ErrorInfoSchema,
      value: {
        reason: reasonOf(error.code),
        domain: ERROR_DOMAIN,
        metadata: metadataOf(error.fields, tenant),
      },
    },
  ];
  if (error.violations.length > 0) {
    details.push({
      desc: BadRequestSchema,
      value: { fieldViolations: error.violations.map((v) => ({ ...v })) },
    });
  }
  if (error.code === "quota_exhausted") details.push(...quotaDetails(error));
  const message = stripTenant(error.message, tenant);
  return new ConnectError(message, STATUS_OF[error.code], undefined, details, error);
}

/** QuotaFailure (subject: the tenant; the limit) and RetryInfo (when it may free), ADR 0015. */
function quotaDetails(error: TetherError): ConstructorParameters<typeof ConnectError>[3] & object {
  const { tenant, limit, max, retryAfterMs } = error.fields;
  const limitName = String(limit);
  const delayMs = Math.max(0, Math.round(Number(retryAfterMs)) || 0);
  return [
    {
      desc: QuotaFailureSchema,
      value: {
        violations: [
          {
            subject: String(tenant),
            description: `the tenant's ${limitName} limit is used up`,
            quotaId: limitName,
            quotaValue: BigInt(Number(max) || 0),
          },
        ],
      },
    },
    {
      desc: RetryInfoSchema,
      value: {
        retryDelay: {
          seconds: BigInt(Math.floor(delayMs / 1000)),
          nanos: (delayMs % 1000) * 1_000_000,
        },
      },
    },
  ];
}

/**
 * Converts anything thrown by a service into the ConnectError the client receives. ConnectErrors
 * pass through: they were already built here (connectErrorOf) or by Connect itself.
 */
export function toConnectError(error: unknown, log: ErrorLog, tenant?: string): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof TetherError && error.code !== "internal") {
    return connectErrorOf(error, tenant);
  }
  const gone = clientGone(error);
  if (gone !== undefined) return leftEarly(error, gone, log);
  log.error({ err: error }, "unexpected error at the API edge");
  return new ConnectError(GENERIC_INTERNAL, Code.Internal, undefined, undefined, error);
}

/** The edge: one interceptor converts errors of unary calls and of streams mid-flight. */
export function createErrorInterceptor(log: ErrorLog): Interceptor {
  return (next) => async (req) => {
    const tenant = req.contextValues.get(tenantKey);
    try {
      const res = await next(req);
      if (!res.stream) return res;
      return {
        ...res,
        message: observeStream(res.message, {
          fail: (error) => toConnectError(error, log, tenant),
          // Thrown in by the transport: the response could not be delivered, whatever the error.
          abandoned: (error) =>
            error instanceof ConnectError
              ? error
              : leftEarly(error, clientGone(error) ?? "undelivered", log),
        }),
      };
    } catch (error) {
      throw toConnectError(error, log, tenant);
    }
  };
}

/**
 * The reverse direction, for Tether's own clients: a ConnectError carrying ErrorInfo from this
 * domain becomes the TetherError the server threw (code, message, fields, violations), so a store
 * over the wire fails exactly as the local store does.
 */
export function tetherErrorFromConnect(error: unknown): unknown {
  if (!(error instanceof ConnectError)) return error;
  const info = error
    .findDetails(ErrorInfoSchema)
    .find((d) => d.domain === ERROR_DOMAIN && isTetherCode(d.reason.toLowerCase()));
  const violations = error
    .findDetails(BadRequestSchema)
    .flatMap((b) => b.fieldViolations.map((v) => ({ field: v.field, description: v.description })));
  const code: TetherErrorCode = info
    ? (info.reason.toLowerCase() as TetherErrorCode)
    : error.code === Code.Unavailable
      ? "store_unavailable"
      : error.code === Code.InvalidArgument
        ? "invalid_argument"
        : error.code === Code.NotFound
          ? "session_not_found"
          : "internal";
  const fields: Record<string, unknown> = { ...(info?.metadata ?? {}), grpcCode: error.code };
  return new TetherError(code, error.rawMessage, { fields, violations, cause: error });
}
