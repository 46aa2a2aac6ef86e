-- loadSession: the committed state of a session, with the whole transcript or, when the caller's
-- mark names this transcript's epoch, only the messages after the mark. Writes nothing.
-- KEYS[1] head hash   KEYS[2] message list   KEYS[3] metadata hash
-- ARGV[1] mark epoch ("" for no mark)   ARGV[2] mark message count
-- Replies: {R.OK, rev, turn, in, out, cacheRead, cacheWrite, reasoning, epoch, from, cost, n,
--           msg1..msgn, key1, value1, ...}   messages from transcript index `from` on
--          {R.NONE}   no commit yet (or deleted)
--- @include "session"

local head_key = KEYS[1]
local messages_key = KEYS[2]
local metadata_key = KEYS[3]
local mark_epoch = ARGV[1]
local mark_message_count = ARGV[2]

return session_state(head_key, messages_key, metadata_key, mark_epoch, tonumber(mark_message_count))
