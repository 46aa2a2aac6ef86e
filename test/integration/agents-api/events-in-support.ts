// What the "events in" tests share: the wired server on the echo model with its `/tool` command
// (the front door goes through the real runtime), the official SDK pointed at it, a raw POST,
// and gRPC on the same port to start turns with client tools and to watch what the door did.
import { createClient, type Transport } from "@connectrpc/connect";
import OpenAI from "openai-agents-sdk";
import type { TurnEvent } from "../../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { waitFor } from "../../support/wait-for.js";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";

export interface EventsDoor {
  wired: WiredServer;
  baseUrl: string;
  transport: Transport;
  sdk: OpenAI;
  /** POST /v1/agents/sessions/{id}/events with a raw body and headers. */
  post(sessionId: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

export async function startEventsDoor(env: Record<string, string> = {}): Promise<EventsDoor> {
  const wired = await startWiredServer({ TETHER_PROVIDER: "scripted-tools", ...env });
  const baseUrl = `http://127.0.0.1:${wired.server.port}`;
  return {
    wired,
    baseUrl,
    transport: wired.as(),
    sdk: new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: "any-key", maxRetries: 0 }),
    post: (sessionId, body, headers = {}) =>
      fetch(`${baseUrl}/v1/agents/sessions/${sessionId}/events`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer k", ...headers },
        body: JSON.stringify(body),
      }),
  };
}

export const userMessage = (text: string) => ({
  type: "agent.session.input.message" as const,
  input: [{ role: "user" as const, content: [{ type: "input_text" as const, text }] }],
});

/** Every event of a session's log from the start, collected while the test runs. */
export interface SessionWatch {
  events: TurnEvent[];
  stop(): void;
  /** Resolves with the first collected event of `kind` that `match` accepts. */
  next<K extends NonNullable<TurnEvent["event"]["case"]>>(
    kind: K,
    match?: (event: TurnEvent) => boolean,
  ): Promise<TurnEvent>;
  count(kind: NonNullable<TurnEvent["event"]["case"]>): number;
}

export function watchSession(transport: Transport, sessionId: string): SessionWatch {
  const events: TurnEvent[] = [];
  const abort = new AbortController();
  const client = createClient(TurnService, transport);
  void (async () => {
    for await (const item of client.watchSession({ sessionId }, { signal: abort.signal })) {
      if (item.event) events.push(item.event);
    }
  })().catch(() => undefined);
  const found = (kind: string, match: (e: TurnEvent) => boolean) =>
    events.find((e) => e.event.case === kind && match(e));
  return {
    events,
    stop: () => abort.abort(),
    next: (kind, match = () => true) =>
      waitFor(() => found(kind, match), { what: `a ${kind} event`, detail: () => kinds(events) }),
    count: (kind) => events.filter((e) => e.event.case === kind).length,
  };
}

const kinds = (events: TurnEvent[]) => events.map((e) => e.event.case).join(", ");

/** The text a finished turn answered with ("" for any other outcome). */
export function finishedText(event: TurnEvent): string {
  if (event.event.case !== "turnCompleted") return "";
  const kind = event.event.value.outcome?.kind;
  return kind?.case === "finished" ? kind.value.value : "";
}

/** How the turn ended: finished, stopped or failed. */
export function outcomeOf(event: TurnEvent): string | undefined {
  return event.event.case === "turnCompleted" ? event.event.value.outcome?.kind.case : undefined;
}

/**
 * A turn started over gRPC that asks for the client tool `lookup` and waits for it. Resolves once
 * the call (or its approval) was requested, with the turn's id; the stream is closed then (the
 * turn goes on without it).
 */
export async function startToolTurn(
  transport: Transport,
  sessionId: string,
  requiresApproval = false,
): Promise<{ turnId: string; callId: string }> {
  const client = createClient(TurnService, transport);
  const stream = client.streamTurn({
    sessionId,
    input: [{ kind: { case: "text", value: "/tool lookup {}" } }],
    clientTools: [
      { name: "lookup", description: "looks up", parametersJsonSchema: "{}", requiresApproval },
    ],
  });
  const wanted = requiresApproval ? "toolApprovalRequested" : "toolCallRequested";
  for await (const item of stream) {
    const event = item.event;
    if (event?.event.case === wanted) {
      return { turnId: event.turnId, callId: event.event.value.callId };
    }
  }
  throw new Error(`the turn ended before ${wanted}`);
}
