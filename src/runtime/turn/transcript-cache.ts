// A replica's decoded transcripts, so a turn on a long session loads and decodes only what was
// committed since this replica last read it, not the whole history (ADR 0004). The store
// decides what is new: a load names the epoch and count held here, and the store answers with
// the messages after it, or the whole transcript when the mark is not its own (another epoch, a
// shorter transcript). Decoded messages are shared with the turns that read them and never
// changed: the engine takes history as readonly.
import type { Message } from "../../domain/conversation.js";
import type { SessionId } from "../../domain/ids.js";
import type { SessionSnapshot } from "../../domain/session.js";
import type { RuntimeStore } from "../../ports/runtime-store.js";
import { decodeMessage } from "./message-codec.js";

export interface LoadedTranscript {
  /** The committed state as loaded (its `messages` may be only the new ones). */
  snapshot: SessionSnapshot | undefined;
  /** The whole decoded transcript. */
  history: readonly Message[];
}

export interface TranscriptCache {
  load(sessionId: SessionId): Promise<LoadedTranscript>;
}

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
  return {
    async load(sessionId) {
      const mine = held.get(sessionId);
      const snapshot = await store.loadSession(
        sessionId,
        mine && { epoch: mine.epoch, messageCount: mine.messages.length },
      );
      held.delete(sessionId);
      if (!snapshot) return { snapshot, history: [] };
      const base = mine && snapshot.messagesFrom === mine.messages.length ? mine.messages : [];
      const messages = [...base, ...snapshot.messages.map(decodeMessage)];
      if (snapshot.transcriptEpoch !== "") {
        held.set(sessionId, { epoch: snapshot.transcriptEpoch, messages });
        if (held.size > capacity) {
          const oldest = held.keys().next();
          if (!oldest.done) held.delete(oldest.value);
        }
      }
      return { snapshot, history: messages };
    },
  };
}
