// The error table read for HTTP (ADR 0037): every TetherError code has an OpenAI status and type,
// the body names a refused field in `param`, and the headers tell the SDKs when (not) to retry.
import { describe, expect, it } from "vitest";
import { STATUS_OF } from "../../../src/api/errors.js";
import { httpErrorOf } from "../../../src/api/http-errors.js";
import { agentAlreadyExists } from "../../../src/domain/resource-errors.js";
import {
  invalidArgument,
  TetherError,
  turnInProgress,
  type TetherErrorCode,
} from "../../../src/domain/errors.js";

describe("httpErrorOf", () => {
  it("gives every TetherError code but internal a 4xx or 503/504 status, never a bare 500", () => {
    for (const code of Object.keys(STATUS_OF) as TetherErrorCode[]) {
      const { status } = httpErrorOf(new TetherError(code, "x"));
      if (code === "internal") expect(status).toBe(500);
      else expect([400, 401, 403, 404, 409, 422, 429, 503, 504]).toContain(status);
    }
  });

  it("names the refused field in param, in OpenAI's body", () => {
    expect(httpErrorOf(invalidArgument("tools[2].type", "is not served"))).toEqual({
      status: 400,
      headers: {},
      body: {
        error: {
          message: "tools[2].type: is not served",
          type: "invalid_request_error",
          param: "tools[2].type",
          code: "invalid_argument",
        },
      },
    });
  });

  it("answers 409 with x-should-retry false, 422 for what exists, 429 with retry-after-ms", () => {
    const busy = httpErrorOf(turnInProgress("t:s", "delete"), "t");
    expect(busy.status).toBe(409);
    expect(busy.headers["x-should-retry"]).toBe("false");
    expect(busy.body.error.message).not.toContain("t:s");
    expect(httpErrorOf(agentAlreadyExists("a")).status).toBe(422);
    const quota = httpErrorOf(
      new TetherError("quota_exhausted", "used up", { fields: { retryAfterMs: 1500 } }),
    );
    expect(quota.status).toBe(429);
    expect(quota.headers).toEqual({ "retry-after-ms": "1500", "retry-after": "2" });
  });

  it("hides anything not a TetherError behind a generic 500", () => {
    const hidden = httpErrorOf(new Error("secret detail"));
    expect(hidden.status).toBe(500);
    expect(JSON.stringify(hidden.body)).not.toContain("secret");
  });
});
