// The one error table (errors.ts, ADR 0003) read for HTTP: the front door (src/agents-api, ADR
// 0037) answers a TetherError with the status and body OpenAI's SDKs understand. It derives the
// HTTP status from the gRPC code STATUS_OF gives, so a new TetherError code needs no row here.
import { Code } from "@connectrpc/connect";
import { TetherError } from "../domain/errors.js";
import { STATUS_OF, stripTenant } from "./errors.js";

/** OpenAI's error body: `{"error": {message, type, param, code}}`. */
export interface HttpErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface HttpError {
  status: number;
  headers: Record<string, string>;
  body: HttpErrorBody;
}

interface HttpRow {
  status: number;
  type: string;
  /** The SDKs retry 409 and 5xx; `false` tells them a retry of the same request cannot help. */
  shouldRetry?: boolean;
}

const INTERNAL: HttpRow = { status: 500, type: "server_error" };

/**
 * gRPC code → HTTP. ALREADY_EXISTS is 422, not 409: the SDKs retry a 409, and the same create can
 * never succeed. ABORTED and FAILED_PRECONDITION are 409 with `x-should-retry: false` (a changed
 * state, e.g. a turn still running, is what the caller must act on).
 */
const HTTP_OF: Partial<Record<Code, HttpRow>> = {
  [Code.InvalidArgument]: { status: 400, type: "invalid_request_error" },
  [Code.OutOfRange]: { status: 400, type: "invalid_request_error" },
  [Code.Unauthenticated]: { status: 401, type: "authentication_error" },
  [Code.PermissionDenied]: { status: 403, type: "permission_error" },
  [Code.NotFound]: { status: 404, type: "not_found_error" },
  [Code.AlreadyExists]: { status: 422, type: "invalid_request_error" },
  [Code.Aborted]: { status: 409, type: "conflict_error", shouldRetry: false },
  [Code.FailedPrecondition]: { status: 409, type: "conflict_error", shouldRetry: false },
  [Code.ResourceExhausted]: { status: 429, type: "rate_limit_error" },
  [Code.Unavailable]: { status: 503, type: "server_error" },
  [Code.DeadlineExceeded]: { status: 504, type: "server_error" },
};

/** The HTTP answer to any thrown value; the detail of a non-TetherError stays in the log. */
export function httpErrorOf(error: unknown, tenant?: string): HttpError {
  if (!(error instanceof TetherError) || error.code === "internal") {
    return {
      status: INTERNAL.status,
      headers: {},
      body: { error: { message: "internal error", type: INTERNAL.type, param: null, code: null } },
    };
  }
  const row = HTTP_OF[STATUS_OF[error.code]] ?? INTERNAL;
  const headers: Record<string, string> = {};
  if (row.shouldRetry === false) headers["x-should-retry"] = "false";
  if (error.code === "quota_exhausted") {
    const delayMs = Math.max(0, Math.round(Number(error.fields.retryAfterMs)) || 0);
    headers["retry-after-ms"] = String(delayMs);
    headers["retry-after"] = String(Math.ceil(delayMs / 1000));
  }
  return {
    status: row.status,
    headers,
    body: {
      error: {
        message: stripTenant(error.message, tenant),
        type: row.type,
        param: error.violations[0]?.field ?? null,
        code: error.code,
      },
    },
  };
}
