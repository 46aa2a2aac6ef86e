-- runScheduleNow: asks for one fire at ARGV[1] (the Redis clock's now when empty), besides the
-- regular timing; a request already waiting is kept (one fire answers both), and an instant at or
-- before the last fire's occurrence asks for nothing (a request at that instant has fired).
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] the request's instant (ms) or ''   ARGV[2] due-index member
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
--- @include "clock"
--- @include "num"
--- @include "schedule"

local schedule_key = KEYS[1]
local due_index_key = KEYS[2]
local asked_at = ARGV[1]
local due_index_member = ARGV[2]

if redis.call('EXISTS', schedule_key) == 0 then return { R.NONE } end
local now = now_ms()
local state = redis.call('HMGET', schedule_key, 'runnow', 'last')
local waiting = (state[1] or '') ~= ''
local fired = asked_at ~= '' and (state[2] or '') ~= '' and tonumber(asked_at) <= tonumber(state[2])
if not waiting and not fired then
  local at = now
  if asked_at ~= '' then at = tonumber(asked_at) end
  redis.call('HSET', schedule_key, 'runnow', num(at))
end
sched_reindex(schedule_key, due_index_key, due_index_member, now)
return { R.OK, unpack(sched_record(schedule_key)) }
