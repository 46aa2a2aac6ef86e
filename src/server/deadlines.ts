// A default deadline for unary calls whose client set none, so a stuck store call cannot hold a
// request (and its memory) forever. Streams are exempt: watching a session is meant to last.
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { connectErrorOf } from "../api/errors.js";
import { deadlineExceeded } from "../domain/errors.js";

export function createDefaultDeadlineInterceptor(defaultTimeoutMs: number): Interceptor {
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const expired = AbortSignal.timeout(defaultTimeoutMs);
    // The client's own deadline (and client disconnects) abort req.signal; whichever comes first.
    const signal = AbortSignal.any([req.signal, expired]);
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        const reason: unknown = signal.reason;
        reject(reason instanceof ConnectError ? reason : connectErrorOf(deadlineExceeded()));
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([next({ ...req, signal }), aborted]);
    } finally {
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  };
}
