// The reads that verify a fault run (schedules, final sessions) come after faults the harness
// injected itself; a store still failing over or a replica still starting answers UNAVAILABLE for
// a while. Such a read is retried, on the next replica, with a growing pause, within a budget
// shared by the whole verification phase; each retry is counted and reported, so a run that
// needed them says so. Past the budget the last error is thrown: a store that never comes back is
// still a failure, only a bounded outage is ridden out.
import { Code, ConnectError } from "@connectrpc/connect";
import { sleep } from "../support/wait-for.js";

export interface VerificationRetries {
  /** Retries by gRPC code name (`Unavailable`, `DeadlineExceeded`, ...; `other` for non-RPC). */
  retries: Record<string, number>;
  /** Time spent pausing between retries. */
  waited_ms: number;
  /** The longest run of retries a single read needed. */
  longest_streak: number;
}

export interface VerificationReadsOptions {
  /** Total pause allowed across every read of the phase. */
  budgetMs: number;
  /** First pause; doubled at each retry of one read, up to `maxPauseMs`. */
  firstPauseMs?: number;
  maxPauseMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export interface VerificationReads {
  /** `call` on the replicas in turn until one answers, within the budget. */
  onAny<T>(addresses: readonly string[], call: (baseUrl: string) => Promise<T>): Promise<T>;
  readonly report: VerificationRetries;
}

/** The code a retry is counted under. */
export function retryCode(error: unknown): string {
  return error instanceof ConnectError ? Code[error.code] : "other";
}

export function createVerificationReads(options: VerificationReadsOptions): VerificationReads {
  const pauseFor = options.sleep ?? sleep;
  const first = options.firstPauseMs ?? 100;
  const max = options.maxPauseMs ?? 4_000;
  const report: VerificationRetries = { retries: {}, waited_ms: 0, longest_streak: 0 };
  return {
    report,
    async onAny(addresses, call) {
      let pause = first;
      for (let attempt = 0; ; attempt++) {
        const baseUrl = addresses[attempt % addresses.length] as string;
        try {
          const answer = await call(baseUrl);
          report.longest_streak = Math.max(report.longest_streak, attempt);
          return answer;
        } catch (error) {
          const left = options.budgetMs - report.waited_ms;
          if (left <= 0) throw error;
          const code = retryCode(error);
          report.retries[code] = (report.retries[code] ?? 0) + 1;
          const wait = Math.min(pause, left);
          report.waited_ms += wait;
          await pauseFor(wait);
          pause = Math.min(pause * 2, max);
        }
      }
    },
  };
}
