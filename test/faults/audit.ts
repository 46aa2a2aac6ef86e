// The fault suite's verdict, from the records in Redis (session state through the store, the event
// log) set against what the clients saw and what the replicas logged.
import type { Cluster, Redis } from "ioredis";
import { createTenantScope } from "../../src/api/tenancy.js";
import type { SessionId } from "../../src/domain/ids.js";
import type { SessionEvent } from "../../src/domain/session-events.js";
import { createRedisEventLog } from "../../src/store/redis/event-log.js";
import { createRedisStore } from "../../src/store/redis/index.js";
import type { InputRecord } from "./clients.js";
import type { LogRecord } from "./replicas.js";

export interface AuditReport {
  acknowledged: number;
  committed: number;
  lost: number;
  duplicated: number;
  stale_commits: number;
  revision_gaps: number;
  /** Committed turns that are not one user message and its echo (a turn cut short). */
  malformed_turns: number;
  /** Acknowledged inputs whose client never saw its turn_completed (even by cursor). */
  incomplete_streams: number;
  /** A client's turn_completed named a head revision whose commit does not hold its input. */
  mismatched_revisions: number;
  /** Committed user messages no client submitted. */
  unknown_commits: number;
  turns_abandoned_lease_lost: number;
  recovered_announcements: number;
  /** Turns that parked and were resumed at least once. */
  parked_turns: number;
  /** Model calls a parked turn made before it parked, made again after (must be 0). */
  model_calls_repeated: number;
  /** Tool calls a parked turn finished before it parked, finished again after (must be 0). */
  tools_reexecuted: number;
  /** Tool results the server accepted, and those the committed turn does not carry (0). */
  answers_accepted: number;
  answers_lost: number;
  /** The front door's clients' share of the figures above (door-clients.ts). */
  door: DoorFigures;
  problems: string[];
}

export interface DoorFigures {
  inputs: number;
  acknowledged: number;
  /** Commits of their inputs' tokens (each input's, counted once per commit). */
  committed: number;
  lost: number;
  duplicated: number;
  incomplete: number;
}

const TOKEN = /tok[0-9a-f]{32}/gu;

interface ParsedMessage {
  role: string;
  tokens: string[];
  /** A tool message's call id and content. */
  callId?: string;
  content?: string;
}

function parseMessage(raw: string | undefined): ParsedMessage {
  if (raw === undefined) return { role: "none", tokens: [] };
  const parsed = JSON.parse(raw) as { role?: string; callId?: string; content?: unknown };
  return {
    role: parsed.role ?? "unknown",
    tokens: raw.match(TOKEN) ?? [],
    ...(parsed.role === "tool" && {
      callId: String(parsed.callId),
      content: String(parsed.content),
    }),
  };
}

/** What a parked turn did before it first parked, to tell repeats after it. */
interface ParkWatch {
  maxIteration: number;
  finished: Set<string>;
  parked: boolean;
  resumed: boolean;
}

export async function audit(
  redis: Redis | Cluster,
  inputs: InputRecord[],
  sessions: string[],
  logs: LogRecord[],
): Promise<AuditReport> {
  const store = createRedisStore({ redis });
  const log = createRedisEventLog({ redis });
  const scope = createTenantScope("default");
  const problems: string[] = [];
  const note = (text: string): void => {
    if (problems.length < 40) problems.push(text);
  };
  const tokenCount = new Map<string, number>();
  const tokenRevision = new Map<string, { sessionId: string; revision: number }>();
  let committed = 0;
  let revisionGaps = 0;
  let staleCommits = 0;
  let recovered = 0;
  let malformedTurns = 0;
  // "<token>#<call id>" -> the committed tool result of that call.
  const toolResults = new Map<string, string>();
  let parkedTurns = 0;
  let modelCallsRepeated = 0;
  let toolsReexecuted = 0;
  // (session, revision) -> the turn id and fencing token its announced completion carries.
  const completions = new Map<string, { turnId: string; fencingToken: number | undefined }>();

  for (const sessionId of sessions) {
    const storeId = scope.toStore(sessionId, "session_id") as SessionId;
    const snapshot = await store.loadSession(storeId);
    const head = snapshot?.headRevision ?? 0;
    // The session's first input created it at revision 1 (ADR 0003); each turn adds one after.
    const created = snapshot ? 1 : 0;
    if (snapshot && snapshot.turnIndex + created !== head) {
      revisionGaps++;
      note(`${sessionId}: turn index ${snapshot.turnIndex} but head revision ${head}`);
    }
    // The echo model commits [user, assistant] per turn, the reply repeating the user's text; a
    // tool turn has its call and result between them. Anything else is a turn committed cut
    // short (or twice over): counted, and its tokens still counted where they sit, so one bad
    // turn does not shift every later one into "lost".
    const messages = snapshot?.messages ?? [];
    let revision = created;
    for (let i = 0; i < messages.length;) {
      revision++;
      const user = parseMessage(messages[i]);
      let end = i + 1;
      while (end < messages.length && parseMessage(messages[end]).role !== "user") end++;
      const rest = messages.slice(i + 1, end).map(parseMessage);
      const reply = rest.at(-1) ?? parseMessage(undefined);
      const whole =
        user.role === "user" &&
        reply.role === "assistant" &&
        user.tokens.join() === reply.tokens.join() &&
        rest.filter((m) => m.role === "tool").length * 2 === rest.length - 1;
      for (const m of rest) {
        if (m.role === "tool" && m.callId !== undefined) {
          toolResults.set(`${user.tokens.join()}#${m.callId}`, m.content ?? "");
        }
      }
      if (!whole) {
        malformedTurns++;
        // The whole turn as committed, each message cut short: what was in it tells why.
        const shown = messages
          .slice(i, end)
          .map((m) => (m.length > 240 ? `${m.slice(0, 240)}…` : m))
          .join(" | ");
        const logged = logs
          .filter(
            (r) =>
              (r.msg === "turn committed" && Number(r.headRevision) === revision) ||
              (typeof r.msg === "string" && r.msg.startsWith("turn parked")),
          )
          .filter((r) => scope.toClient(String(r.sessionId)) === sessionId)
          .map((r) => `${r.replica}: ${r.msg} ${String(r.outcome ?? "")} ${String(r.reason ?? "")}`)
          .slice(-4)
          .join("; ");
        note(
          `${sessionId}: revision ${revision} is not a user message and its echo: ${shown} [${logged}]`,
        );
      }
      for (const token of user.role === "user" ? user.tokens : []) {
        committed++;
        tokenCount.set(token, (tokenCount.get(token) ?? 0) + 1);
        tokenRevision.set(token, { sessionId, revision });
      }
      i += whole ? 1 + rest.length : 1;
    }
    if (revision !== head) {
      note(
        `${sessionId}: ${messages.length} messages read as ${revision - created} turns, head ${head}`,
      );
    }

    // The log's turn_completed events must announce revisions 2..head (1 is the creation), each
    // once, in order,
    // with fencing tokens that never go back to a superseded generation.
    const announced: number[] = [];
    let lastFence = 0;
    let after = 0;
    const watches = new Map<string, ParkWatch>();
    for (let page = 0; page < 10_000; page++) {
      const read = await log.read(storeId, after, 512);
      if (read.firstRetainedSeq > 1 && page === 0) note(`${sessionId}: log trimmed`);
      if (read.entries.length === 0) break;
      for (const entry of read.entries) {
        after = entry.seq;
        const event = entry.event;
        const watch = watchTurn(watches, entry.turnId, event);
        if (watch === "repeated_model_call") {
          modelCallsRepeated++;
          note(`${sessionId}: turn ${entry.turnId} repeated a model call after it parked`);
        } else if (watch === "reexecuted_tool") {
          toolsReexecuted++;
          note(`${sessionId}: turn ${entry.turnId} ran a finished tool again after it parked`);
        }
        if (event.type !== "turn_completed") continue;
        announced.push(event.headRevision);
        completions.set(`${sessionId}#${event.headRevision}`, {
          turnId: entry.turnId,
          fencingToken: event.fencingToken,
        });
        if (event.recovered === true) recovered++;
        const fence = event.fencingToken ?? 0;
        if (fence < lastFence) {
          staleCommits++;
          note(
            `${sessionId}: revision ${event.headRevision} under generation ${fence} < ${lastFence}`,
          );
        }
        lastFence = Math.max(lastFence, fence);
      }
    }
    for (const w of watches.values()) if (w.resumed) parkedTurns++;
    for (let i = 0; i < Math.max(announced.length, head - created); i++) {
      if (announced[i] !== i + 1 + created) {
        revisionGaps++;
        note(`${sessionId}: announced revisions ${JSON.stringify(announced)} for head ${head}`);
        break;
      }
    }
  }

  // A replica that logged a commit must be the one whose completion the log announces for that
  // revision: otherwise two writers both believe they committed it.
  const audited = new Set(sessions);
  for (const record of logs) {
    if (record.msg !== "turn committed") continue;
    const sessionId = scope.toClient(String(record.sessionId));
    if (!audited.has(sessionId)) continue;
    const announced = completions.get(`${sessionId}#${String(record.headRevision)}`);
    if (
      !announced ||
      announced.turnId !== record.turnId ||
      (announced.fencingToken !== undefined && announced.fencingToken !== record.fencingToken)
    ) {
      staleCommits++;
      note(
        `${record.replica} logged ${String(record.turnId)} as revision ${String(record.headRevision)} of ${sessionId} (generation ${String(record.fencingToken)}), the log announces ${JSON.stringify(announced)}`,
      );
    }
  }

  // Once per session that lost input: what holds it (a parked turn and its waits, the lease).
  const explained = new Set<string>();
  const noteStuck = async (sessionId: string): Promise<void> => {
    if (explained.has(sessionId)) return;
    explained.add(sessionId);
    const storeId = scope.toStore(sessionId, "session_id") as SessionId;
    const parked = await store.readParkedTurn(storeId);
    const waits = parked ? await store.readToolCalls(storeId, parked.turnId) : [];
    const lease = await store.currentLease(storeId);
    const inputs = await store.listInputs(storeId);
    note(
      `${sessionId} holds: parked ${JSON.stringify(parked ? { ...parked, progress: undefined } : null)} waits ${JSON.stringify(waits)} lease ${lease?.owner.ownerId ?? "none"} open inputs ${inputs.length}`,
    );
  };
  const submitted = new Set(inputs.map((i) => i.token));
  let lost = 0;
  let duplicated = 0;
  let incomplete = 0;
  let mismatched = 0;
  const door: DoorFigures = {
    inputs: 0,
    acknowledged: 0,
    committed: 0,
    lost: 0,
    duplicated: 0,
    incomplete: 0,
  };
  for (const input of inputs) {
    const count = tokenCount.get(input.token) ?? 0;
    if (input.door) {
      door.inputs++;
      door.committed += count;
      if (count > 1) door.duplicated++;
      if (input.acknowledged) door.acknowledged++;
      if (input.acknowledged && count === 0) door.lost++;
      if (input.acknowledged && !input.completed) door.incomplete++;
    }
    if (count > 1) {
      duplicated++;
      note(`${input.token} committed ${count} times`);
    }
    if (!input.acknowledged) continue;
    if (count === 0) {
      lost++;
      note(`${input.token} (${input.sessionId}) acknowledged but never committed`);
      await noteStuck(input.sessionId);
    }
    if (!input.completed) {
      incomplete++;
      note(
        `${input.token} (${input.sessionId}): no turn_completed after ${input.attempts} attempts ${JSON.stringify(input.errors)}`,
      );
    } else if (!input.door) {
      // A door client learns no revision (the SDK's events carry none): its turn's end is all.
      const at = tokenRevision.get(input.token);
      if (at?.revision !== input.headRevision) {
        mismatched++;
        note(
          `${input.token}: client saw revision ${input.headRevision}, committed at ${JSON.stringify(at)}`,
        );
      }
    }
  }
  let unknown = 0;
  for (const token of tokenCount.keys()) if (!submitted.has(token)) unknown++;
  // Every accepted result is the one its committed turn carries.
  let answersLost = 0;
  let answersAccepted = 0;
  for (const input of inputs) {
    for (const [callId, output] of Object.entries(input.accepted)) {
      answersAccepted++;
      const committedResult = toolResults.get(`${input.token}#${callId}`);
      if (committedResult !== output) {
        answersLost++;
        note(`${input.token}: accepted ${output} for ${callId}, committed ${committedResult}`);
      }
    }
  }

  await log.close();
  return {
    acknowledged: inputs.filter((i) => i.acknowledged).length,
    committed,
    lost,
    duplicated,
    stale_commits: staleCommits,
    revision_gaps: revisionGaps,
    malformed_turns: malformedTurns,
    incomplete_streams: incomplete,
    mismatched_revisions: mismatched,
    unknown_commits: unknown,
    turns_abandoned_lease_lost: logs.filter((r) => r.msg === "turn abandoned: lease lost").length,
    recovered_announcements: recovered,
    parked_turns: parkedTurns,
    model_calls_repeated: modelCallsRepeated,
    tools_reexecuted: toolsReexecuted,
    answers_accepted: answersAccepted,
    answers_lost: answersLost,
    door,
    problems,
  };
}

/**
 * Follows one turn's events in log order. A turn that parked and resumed must not run again a
 * model call (usage of an iteration it reached before parking) or a tool call it finished before
 * parking. A turn_started after a turn_parked means the park never reached the store (the replica
 * died between the event and the park): that run starts over, and so does the watch.
 */
function watchTurn(
  watches: Map<string, ParkWatch>,
  turnId: string,
  event: SessionEvent,
): "repeated_model_call" | "reexecuted_tool" | undefined {
  let w = watches.get(turnId);
  if (w === undefined) {
    w = { maxIteration: 0, finished: new Set(), parked: false, resumed: false };
    watches.set(turnId, w);
  }
  switch (event.type) {
    case "turn_started":
      if (!w.resumed) Object.assign(w, { maxIteration: 0, finished: new Set(), parked: false });
      return undefined;
    case "turn_parked":
      w.parked = true;
      return undefined;
    case "turn_resumed":
      w.resumed = true;
      return undefined;
    case "usage_reported":
      if (w.parked && event.iteration <= w.maxIteration) return "repeated_model_call";
      if (!w.parked) w.maxIteration = Math.max(w.maxIteration, event.iteration);
      return undefined;
    case "tool_call_finished":
      if (w.parked && w.finished.has(event.callId)) return "reexecuted_tool";
      if (!w.parked) w.finished.add(event.callId);
      return undefined;
    default:
      return undefined;
  }
}
