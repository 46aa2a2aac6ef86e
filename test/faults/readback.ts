// Reads sessions through the public API (GetSession with the transcript) into the plain shape the
// history checker judges: head revision, the live lease's fencing token, committed inputs per
// revision. Used for the clients' reads during the run and for the final state after it.
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SessionService } from "../../src/gen/tether/v1/session_service_pb.js";
import { TranscriptMessage_Role } from "../../src/gen/tether/v1/transcript_pb.js";
import { inputsByRevision, type FinalSession, type Observation } from "./history/record.js";

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every session's final state, trying the replicas in turn until one answers (30 s at most). */
export async function readFinalSessions(
  addresses: string[],
  sessions: string[],
): Promise<FinalSession[]> {
  const clients = addresses.map(sessionClient);
  const final: FinalSession[] = [];
  const until = Date.now() + 30_000;
  for (const session of sessions) {
    for (let attempt = 0; ; attempt++) {
      const client = clients[attempt % clients.length] as SessionClient;
      try {
        const seen = await readSession(client, session, AbortSignal.timeout(5_000));
        final.push({ session, head: seen.head ?? 0, revisions: seen.revisions ?? [] });
        break;
      } catch (error) {
        if (Date.now() > until) throw error;
        await sleep(200);
      }
    }
  }
  return final;
}
