-- loadSession: the committed state of a session, with the whole transcript or, when the caller's
-- mark names this transcript's epoch, only the messages after the mark. Writes nothing.
-- KEYS[1] head hash   KEYS[2] message list   KEYS[3] metadata hash
-- ARGV[1] mark epoch ("" for no mark)   ARGV[2] mark message count
-- Replies: {R.OK, rev, turn, in, out, cacheRead, cacheWrite, reasoning, epoch, from, cost, n,
--           msg1..msgn, key1, value1, ...}   messages from transcript index `from` on
--          {R.NONE}   no commit yet (or deleted)
return session_state(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]))
