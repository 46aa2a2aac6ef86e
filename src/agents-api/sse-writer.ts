// Server-sent events as the SDKs parse them (ADR 0037, "Events out"): headers go out before the
// first event (the helpers await them, then post their input); each event is one
// `event: <type>\ndata: <json>\n\n` block; heartbeats are comment blocks; never an `id:` line
// (the Python SDK keeps the last id for the stream, and a later comment block becomes an empty
// event its JSON parser refuses) and never a block without data.
import type { HttpResponse } from "./http-io.js";

/** The longest quiet time on a stream: proxies and the SDKs' idle timers see a heartbeat first. */
export const HEARTBEAT_MS = 15_000;

/** What both response kinds offer for streaming; their overloads do not unify into one type. */
interface StreamingResponse {
  readonly destroyed: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  flushHeaders(): void;
  write(chunk: string): boolean;
  end(): unknown;
  once(event: "drain" | "close", listener: () => void): unknown;
  off(event: "drain" | "close", listener: () => void): unknown;
}

export interface SseWriter {
  /**
   * Writes events in one write (a log entry's events travel together, so a client cut off is
   * rarely cut inside one entry); resolves once the socket took them (waits on a slow reader).
   */
  events(batch: readonly ({ type: string } & Record<string, unknown>)[]): Promise<void>;
  end(): void;
  /** Aborted when the client goes away. */
  readonly closed: AbortSignal;
}

export function sseFrame(type: string, payload: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
}

export const HEARTBEAT_FRAME = ": ping\n\n";

/** Sends the headers at once and keeps the stream alive with comment heartbeats. */
export function openSse(
  res: HttpResponse,
  headers: Record<string, string>,
  heartbeatMs = HEARTBEAT_MS,
): SseWriter {
  const out = res as unknown as StreamingResponse;
  const closed = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onClose = () => {
    clearTimeout(timer);
    closed.abort();
  };
  out.once("close", onClose);
  // The client may have left while the stream was being prepared: its close has been heard.
  if (out.destroyed) closed.abort();
  out.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
  });
  out.flushHeaders();
  // Quiet since the last write: a busy stream sends no heartbeats.
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (closed.signal.aborted || out.destroyed) return;
      out.write(HEARTBEAT_FRAME);
      arm();
    }, heartbeatMs);
  };
  arm();
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        out.off("drain", done);
        closed.signal.removeEventListener("abort", done);
        resolve();
      };
      out.once("drain", done);
      closed.signal.addEventListener("abort", done, { once: true });
    });
  return {
    closed: closed.signal,
    async events(batch) {
      if (batch.length === 0 || closed.signal.aborted || out.destroyed) return;
      arm();
      if (!out.write(batch.map((e) => sseFrame(e.type, e)).join(""))) await drained();
    },
    end() {
      clearTimeout(timer);
      out.off("close", onClose);
      if (!out.destroyed) out.end();
    },
  };
}
