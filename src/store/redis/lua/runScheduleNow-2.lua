-- runScheduleNow: asks for one fire at the Redis clock's now, besides the regular timing; a
-- request already waiting is kept (one fire answers both).
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] due-index member
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
--- @include "clock"
--- @include "num"
--- @include "schedule"

local schedule_key = KEYS[1]
local due_index_key = KEYS[2]
local due_index_member = ARGV[1]

if redis.call('EXISTS', schedule_key) == 0 then return { R.NONE } end
local now = now_ms()
if (redis.call('HGET', schedule_key, 'runnow') or '') == '' then
  redis.call('HSET', schedule_key, 'runnow', num(now))
end
sched_reindex(schedule_key, due_index_key, due_index_member, now)
return { R.OK, unpack(sched_record(schedule_key)) }
