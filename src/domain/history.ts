// A session's history: every revision stays readable. A rewind is a commit whose transcript is an
// earlier revision's; the messages it leaves behind are kept, so the revisions before it can still
// be read and forked. A fork is a new session that starts from another session's revision.
import type { SessionId } from "./ids.js";

/** The session as it was at one revision. */
export interface RevisionRead {
  sessionId: SessionId;
  revision: number;
  /** The head now (the read revision is at most this). */
  headRevision: number;
  /** Turns committed up to the revision. */
  turnIndex: number;
  /** The transcript at the revision, as stored (opaque to the store). */
  messages: string[];
  /** The metadata at the revision (the agent binding is part of it). */
  metadata: Record<string, string>;
}

export interface ForkDraft {
  sourceId: SessionId;
  /** A revision of the source, at most its head. */
  atRevision: number;
  /** Must not exist yet (no commit, no queued work, no inputs). */
  targetId: SessionId;
}

export interface RewindDraft {
  sessionId: SessionId;
  /** The revision whose transcript the rewind's commit restores; at most the head. */
  toRevision: number;
  /** The head the caller read; the rewind applies only while it is still the head. */
  expectedHeadRevision: number;
}

/** What a fork or a rewind committed: the session's new head. */
export interface HistoryReceipt {
  sessionId: SessionId;
  headRevision: number;
}
