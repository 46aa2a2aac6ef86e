// Reads sessions through the public API (GetSession with the transcript) into the plain shape the
// history checker judges: head revision, the live lease's fencing token, committed inputs per
// revision. Used for the clients' reads during the run and for the final state after it.
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SessionService } from "../../src/gen/tether/v1/session_service_pb.js";
import { TranscriptMessage_Role } from "../../src/gen/tether/v1/transcript_pb.js";
import { inputsByRevision, type FinalSession, type Observation } from "./history/record.js";
import type { VerificationReads } from "./verify-reads.js";

export type SessionClient = Client<typeof SessionService>;

export function sessionClient(baseUrl: string): SessionClient {
  return createClient(SessionService, createGrpcTransport({ baseUrl }));
}

/** One GetSession, as an observation; a session not created yet reads as head 0. */
export async function readSession(
  client: SessionClient,
  sessionId: string,
  signal: AbortSignal,
): Promise<Observation> {
  try {
    const reply = await client.getSession({ sessionId, includeMessages: true }, { signal });
    const head = Number(reply.session?.headRevision ?? 0n);
    const lease = reply.session?.lease;
    const messages = reply.transcript.map((m) => ({
      user: m.role === TranscriptMessage_Role.USER,
      revision: Number(m.revision),
      texts: m.parts.flatMap((p) => (p.kind.case === "text" ? [p.kind.value] : [])),
    }));
    return {
      head,
      ...(lease && { fencingToken: Number(lease.fencingToken) }),
      revisions: inputsByRevision(head, messages),
    };
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) {
      return { head: 0, revisions: [] };
    }
    throw error;
  }
}

/**
 * Every session's final state, trying the replicas in turn until one answers; an outage the
 * harness caused is ridden out within `reads`' budget, its retries counted there.
 */
export async function readFinalSessions(
  addresses: string[],
  sessions: string[],
  reads: VerificationReads,
): Promise<FinalSession[]> {
  const clients = new Map(addresses.map((a) => [a, sessionClient(a)]));
  const final: FinalSession[] = [];
  for (const session of sessions) {
    const seen = await reads.onAny(addresses, (address) =>
      readSession(clients.get(address) as SessionClient, session, AbortSignal.timeout(5_000)),
    );
    final.push({ session, head: seen.head ?? 0, revisions: seen.revisions ?? [] });
  }
  return final;
}
