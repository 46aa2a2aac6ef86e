// Reading retry-after headers and classifying statuses, as every adapter does.
import { describe, expect, it } from "vitest";
import {
  ProviderError,
  isRetryableStatus,
  parseRetryAfter,
} from "../../../src/ports/model-provider.js";

const headers = (h: Record<string, string>) => new Headers(h);

describe("retry-after", () => {
  it("reads seconds, milliseconds and HTTP dates", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter(headers({ "retry-after": "7" }), now)).toBe(7000);
    expect(parseRetryAfter(headers({ "retry-after": "0.5" }), now)).toBe(500);
    expect(parseRetryAfter(headers({ "retry-after-ms": "250", "retry-after": "9" }), now)).toBe(
      250,
    );
    expect(parseRetryAfter(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), now)).toBe(
      3000,
    );
    expect(parseRetryAfter(headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(parseRetryAfter(headers({}), now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it("classifies statuses", () => {
    expect([408, 409, 429, 500, 503, 529].map(isRetryableStatus)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([400, 401, 403, 404, 422].map(isRetryableStatus)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(new ProviderError("reset").retryable).toBe(true);
    expect(new ProviderError("bad", { status: 400 }).retryable).toBe(false);
    expect(new ProviderError("forced", { status: 400, retryable: true }).retryable).toBe(true);
  });
});
