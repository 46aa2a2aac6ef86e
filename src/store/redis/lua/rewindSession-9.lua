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
local head = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')
if head == 0 then return { R.NONE } end
if head ~= tonumber(ARGV[2]) then return { R.HEAD_CONFLICT, head } end
local target = tonumber(ARGV[1])
if target > head then return { R.OUT_OF_RANGE, head } end
local point, from = history_point(KEYS[1], KEYS[4], target)
if not point then return { R.NOT_KEPT, from } end
if live_lease(KEYS[8], now_ms()) then return { R.BUSY, 'lease' } end
if redis.call('EXISTS', KEYS[9]) == 1 then return { R.BUSY, 'parked' } end

local count = split_point(point)
local pieces = transcript_pieces(KEYS[2], KEYS[5], KEYS[6], target, count)
-- The live list is always the first piece, from its start: that much stays where it is.
local shared = 0
if pieces[1] and pieces[1][1] == KEYS[2] then shared = pieces[1][3] end
local beyond = append_pieces({}, pieces, shared > 0 and 2 or 1)
local live = redis.call('LLEN', KEYS[2])
local archived_at = redis.call('LLEN', KEYS[6])
if live > shared then
  rpush_all(KEYS[6], redis.call('LRANGE', KEYS[2], shared, -1))
  if shared == 0 then redis.call('DEL', KEYS[2]) else redis.call('LTRIM', KEYS[2], 0, shared - 1) end
end
rpush_all(KEYS[2], beyond)
local rev = head + 1
redis.call('HSET', KEYS[1], 'rev', rev)
new_epoch(KEYS[1], rev)
redis.call('RPUSH', KEYS[5], cjson.encode({ r = rev, n = shared, a = archived_at, l = live - shared }))
local turn = tonumber(redis.call('HGET', KEYS[1], 'turn') or '0')
local total = shared + #beyond
record_revision(KEYS[1], KEYS[4], KEYS[3], KEYS[7], rev, total, turn)
return { R.OK, rev }
