// A replica's decoded transcripts, so a turn on a long session loads and decodes only what was
// committed since this replica last read it, not the whole history (ADR 0004). The store
// decides what is new: a load names the epoch and count held here, and the store answers with
// the messages after it, or the whole transcript when the mark is not its own (another epoch, a
// shorter transcript). Decoded messages are shared with the turns that read them and never
// changed: the engine takes history as readonly.
import type { Message } from "../../domain/conversation.js";
import type { SessionId } from "../../domain/ids.js";
import type { SessionSnapshot, TranscriptMark } from "../../domain/session.js";
import type { RuntimeStore } from "../../ports/runtime-store.js";
import type { LoadedTranscript, TranscriptCache } from "../../ports/transcript-cache.js";
import { decodeMessage } from "./message-codec.js";

export type { LoadedTranscript, TranscriptCache };

interface Held {
  epoch: string;
  messages: Message[];
}

/** Sessions held at most; the least recently loaded goes first. */
export const TRANSCRIPT_CACHE_SESSIONS = 1000;

export function createTranscriptCache(
  store: Pick<RuntimeStore, "loadSession">,
  capacity = TRANSCRIPT_CACHE_SESSIONS,
): TranscriptCache {
  const held = new Map<SessionId, Held>();
  const markOf = (sessionId: SessionId): TranscriptMark | undefined => {
    const mine = held.get(sessionId);
    return mine && { epoch: mine.epoch, messageCount: mine.messages.length };
  };
  const accept = (
    sessionId: SessionId,
    snapshot: SessionSnapshot | undefined,
  ): LoadedTranscript => {
    const mine = held.get(sessionId);
    held.delete(sessionId);
    if (!snapshot) return { snapshot, history: [] };
    // The held messages are the base only when the store answered after exactly them.
    const base =
      mine &&
      snapshot.messagesFrom > 0 &&
      snapshot.transcriptEpoch === mine.epoch &&
      snapshot.messagesFrom === mine.messages.length
        ? mine.messages
        : [];
    const messages =
      snapshot.messages.length === 0 ? base : [...base, ...snapshot.messages.map(decodeMessage)];
    if (snapshot.transcriptEpoch !== "") {
      held.set(sessionId, { epoch: snapshot.transcriptEpoch, messages });
      if (held.size > capacity) {
        const oldest = held.keys().next();
        if (!oldest.done) held.delete(oldest.value);
      }
    }
    return { snapshot, history: messages };
  };
  return {
    async load(sessionId) {
      return accept(sessionId, await store.loadSession(sessionId, markOf(sessionId)));
    },
    mark: markOf,
    accept,
  };
}
