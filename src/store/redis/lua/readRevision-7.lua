-- readRevision: the session as it was at a revision (any revision it holds, also one a rewind
-- left behind): its transcript, turn index and metadata then. Writes nothing.
-- KEYS[1] head hash   KEYS[2] message list   KEYS[3] metadata hash   KEYS[4] history list
-- KEYS[5] rewinds list   KEYS[6] archive list   KEYS[7] metadata log
-- ARGV[1] revision
-- Replies: {R.OK, head, turn, n, msg1..msgn, key1, value1, ...}
--          {R.NONE}                    no such session
--          {R.OUT_OF_RANGE, head}      past the head
--          {R.NOT_KEPT, first kept}    before the session's history
--- @include "history"

local head_key = KEYS[1]
local messages_key = KEYS[2]
local metadata_key = KEYS[3]
local history_key = KEYS[4]
local rewinds_key = KEYS[5]
local archive_key = KEYS[6]
local metadata_log_key = KEYS[7]
local revision = ARGV[1]

local head = tonumber(redis.call('HGET', head_key, 'rev') or '0')
if head == 0 then return { R.NONE } end
local rev = tonumber(revision)
if rev > head then return { R.OUT_OF_RANGE, head } end
local point, from = history_point(head_key, history_key, rev)
if not point then return { R.NOT_KEPT, from } end
local count, turn = split_point(point)
local messages = append_pieces({}, transcript_pieces(messages_key, rewinds_key, archive_key, rev, count), 1)
local reply = { R.OK, head, turn, #messages }
for _, m in ipairs(messages) do reply[#reply + 1] = m end
for _, v in ipairs(metadata_at(metadata_key, metadata_log_key, rev, head)) do reply[#reply + 1] = v end
return reply
