// A replica's decoded transcripts (runtime/turn/transcript-cache.ts builds it): what the runtime's
// deps name, so the deps import no room of the runtime.
import type { Message } from "../domain/conversation.js";
import type { SessionId } from "../domain/ids.js";
import type { SessionSnapshot, TranscriptMark } from "../domain/session.js";

export interface LoadedTranscript {
  /** The committed state as loaded (its `messages` may be only the new ones). */
  snapshot: SessionSnapshot | undefined;
  /** The whole decoded transcript. */
  history: readonly Message[];
}

export interface TranscriptCache {
  load(sessionId: SessionId): Promise<LoadedTranscript>;
  /** What this replica holds of the session, for a load made elsewhere (a turn start). */
  mark(sessionId: SessionId): TranscriptMark | undefined;
  /** Takes a snapshot loaded since `mark` (by a turn start) as `load` takes its own. */
  accept(sessionId: SessionId, snapshot: SessionSnapshot | undefined): LoadedTranscript;
}
