// Maps SDK failures to ProviderError once, for every adapter: status and retry-after from an HTTP
// error, no status for transport failures (refused, reset, a stream cut mid-way).
import { ProviderError, parseRetryAfter } from "../ports/model-provider.js";

interface HttpErrorShape {
  status: number | undefined;
  headers: { get(name: string): string | null } | undefined;
  message: string;
}

function isHttpError(err: unknown): err is HttpErrorShape {
  if (!(err instanceof Error)) return false;
  const status = (err as { status?: unknown }).status;
  return typeof status === "number";
}

export function toProviderError(vendor: string, err: unknown, signal: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signal.aborted) {
    return new ProviderError(`${vendor}: call aborted`, { retryable: false, cause: err });
  }
  if (isHttpError(err)) {
    const retryAfterMs = parseRetryAfter(err.headers, Date.now());
    return new ProviderError(`${vendor}: ${err.message}`, {
      status: err.status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      cause: err,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError(`${vendor}: ${message}`, { cause: err });
}

/** Base64 of inline image bytes, for both vendors' image blocks. */
export function toBase64(data: Uint8Array): string {
  let binary = "";
  const chunk = 0x8000;
  for (let i = 0; i < data.length; i += chunk) {
    binary += String.fromCharCode(...data.subarray(i, i + chunk));
  }
  return btoa(binary);
}
