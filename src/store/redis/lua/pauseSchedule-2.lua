-- pauseSchedule: a paused schedule never fires (a live claim still settles). Idempotent.
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] reason, ARGV[2] due-index member
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
--- @include "clock"
--- @include "schedule"

local schedule_key = KEYS[1]
local due_index_key = KEYS[2]
local reason = ARGV[1]
local due_index_member = ARGV[2]

if redis.call('EXISTS', schedule_key) == 0 then return { R.NONE } end
redis.call('HSET', schedule_key, 'paused', 1, 'reason', reason)
sched_reindex(schedule_key, due_index_key, due_index_member, now_ms())
return { R.OK, unpack(sched_record(schedule_key)) }
