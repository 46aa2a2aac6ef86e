-- rewindSession: one commit (head + 1) whose transcript is the one at an earlier revision. Every
-- check comes before the first write: the session exists, the head is the caller's, the revision
-- is held, no lease is live and no turn is parked. Then the live transcript keeps what the two
-- share, moves the rest to the archive (nothing is lost: earlier revisions stay readable),
-- appends what the target has beyond it, and gets a new epoch so cached transcripts reload.
-- KEYS[1] head hash   KEYS[2] message list   KEYS[3] metadata hash   KEYS[4] history list
-- KEYS[5] rewinds list   KEYS[6] archive list   KEYS[7] metadata log   KEYS[8] lease hash
-- KEYS[9] parked turn hash
-- ARGV[1] revision to restore   ARGV[2] expected head
-- Replies: {R.OK, headRevision}
--          {R.NONE} / {R.HEAD_CONFLICT, head} / {R.OUT_OF_RANGE, head} / {R.NOT_KEPT, first kept}
--          {R.BUSY, 'lease' | 'parked'}
--- @include "chunked"
--- @include "clock"
--- @include "epoch"
--- @include "history"
--- @include "lease"

local head_key = KEYS[1]
local messages_key = KEYS[2]
local metadata_key = KEYS[3]
local history_key = KEYS[4]
local rewinds_key = KEYS[5]
local archive_key = KEYS[6]
local metadata_log_key = KEYS[7]
local lease_key = KEYS[8]
local parked_turn_key = KEYS[9]
local revision = ARGV[1]
local expected_head = ARGV[2]

local head = tonumber(redis.call('HGET', head_key, 'rev') or '0')
if head == 0 then return { R.NONE } end
if head ~= tonumber(expected_head) then return { R.HEAD_CONFLICT, head } end
local target = tonumber(revision)
if target > head then return { R.OUT_OF_RANGE, head } end
local point, from = history_point(head_key, history_key, target)
if not point then return { R.NOT_KEPT, from } end
if live_lease(lease_key, now_ms()) then return { R.BUSY, 'lease' } end
if redis.call('EXISTS', parked_turn_key) == 1 then return { R.BUSY, 'parked' } end

local count = split_point(point)
local pieces = transcript_pieces(messages_key, rewinds_key, archive_key, target, count)
-- The live list is always the first piece, from its start: that much stays where it is.
local shared = 0
if pieces[1] and pieces[1][1] == messages_key then shared = pieces[1][3] end
local beyond = append_pieces({}, pieces, shared > 0 and 2 or 1)
local live = redis.call('LLEN', messages_key)
local archived_at = redis.call('LLEN', archive_key)
if live > shared then
  rpush_all(archive_key, redis.call('LRANGE', messages_key, shared, -1))
  if shared == 0 then redis.call('DEL', messages_key) else redis.call('LTRIM', messages_key, 0, shared - 1) end
end
rpush_all(messages_key, beyond)
local rev = head + 1
redis.call('HSET', head_key, 'rev', rev)
new_epoch(head_key, rev)
redis.call('RPUSH', rewinds_key, cjson.encode({ r = rev, n = shared, a = archived_at, l = live - shared }))
local turn = tonumber(redis.call('HGET', head_key, 'turn') or '0')
local total = shared + #beyond
record_revision(head_key, history_key, metadata_key, metadata_log_key, rev, total, turn)
return { R.OK, rev }
