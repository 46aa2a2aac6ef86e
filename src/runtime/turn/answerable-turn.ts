// Whether a turn still takes answers (client tool results, approval decisions). A turn that is
// running or parked does; one whose commit landed does not, whatever its call records still say.
import { sessionNotFound, turnCompleted } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { RuntimeStore } from "../../ports/runtime-store.js";
import { decodeCommitted } from "./message-codec.js";

/**
 * Refuses answers to a turn of a session that does not exist (session_not_found) or to a turn that
 * already committed (turn_not_running, naming the turn), before any call of the request is judged.
 * The committed transcript is the record: every message a turn commits names the turn, and a turn
 * that recorded calls committed at least the message that made them.
 */
export async function requireAnswerableTurn(
  store: Pick<RuntimeStore, "loadSession">,
  sessionId: SessionId,
  turnId: string,
): Promise<void> {
  const snapshot = await store.loadSession(sessionId);
  if (!snapshot) throw sessionNotFound(sessionId);
  // From the end: a turn just finished is the one answers arrive late for. The substring test
  // spares decoding every message (and its images) that cannot be the turn's.
  for (let i = snapshot.messages.length - 1; i >= 0; i--) {
    const raw = snapshot.messages[i] ?? "";
    if (raw.includes(turnId) && decodeCommitted(raw).mark.turnId === turnId) {
      throw turnCompleted(turnId);
    }
  }
}
