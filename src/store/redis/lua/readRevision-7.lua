-- readRevision: the session as it was at a revision (any revision it holds, also one a rewind
-- left behind): its transcript, turn index and metadata then. Writes nothing.
-- KEYS[1] head hash   KEYS[2] message list   KEYS[3] metadata hash   KEYS[4] history list
-- KEYS[5] rewinds list   KEYS[6] archive list   KEYS[7] metadata log
-- ARGV[1] revision
-- Replies: {R.OK, head, turn, n, msg1..msgn, key1, value1, ...}
--          {R.NONE}                    no such session
--          {R.OUT_OF_RANGE, head}      past the head
--          {R.NOT_KEPT, first kept}    before the session's history
local head = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')
if head == 0 then return { R.NONE } end
local rev = tonumber(ARGV[1])
if rev > head then return { R.OUT_OF_RANGE, head } end
local point, from = history_point(KEYS[1], KEYS[4], rev)
if not point then return { R.NOT_KEPT, from } end
local count, turn = split_point(point)
local messages = append_pieces({}, transcript_pieces(KEYS[2], KEYS[5], KEYS[6], rev, count), 1)
local reply = { R.OK, head, turn, #messages }
for _, m in ipairs(messages) do reply[#reply + 1] = m end
for _, v in ipairs(metadata_at(KEYS[3], KEYS[7], rev, head)) do reply[#reply + 1] = v end
return reply
