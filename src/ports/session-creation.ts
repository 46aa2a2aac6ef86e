// Creating a session through the store port. A session exists once it has a commit, so creation is
// the commit from head 0: of two racing creates of one id exactly one applies, and the other sees
// the head CAS conflict, which here means "it exists already". The one place that spells this;
// CreateSession, a StreamTurn that binds an agent, and an agent schedule's fire all call it.
import { isTetherError } from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import type { SessionCommitStore } from "./runtime-store.js";

/**
 * Creates the session with `metadataPatch` (none when empty) unless it has a commit already.
 * True when this call created it; false when it existed (its metadata is then left as it was).
 */
export async function createSessionIfAbsent(
  store: Pick<SessionCommitStore, "commit">,
  sessionId: SessionId,
  metadataPatch: Readonly<Record<string, string>> = {},
): Promise<boolean> {
  try {
    await store.commit({
      sessionId,
      expectedHeadRevision: 0,
      appendMessages: [],
      ...(Object.keys(metadataPatch).length > 0 && { metadataPatch: { ...metadataPatch } }),
    });
    return true;
  } catch (error) {
    if (!isTetherError(error, "head_revision_conflict")) throw error;
    return false;
  }
}
