-- updateSchedule: replaces the spec and the next regular occurrence and bumps the revision, so a
-- fire claimed before the update settles without moving the new timing.
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] spec, ARGV[2] next occurrence ('' for none), ARGV[3] due-index member
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
--- @include "clock"
--- @include "schedule"

local schedule_key = KEYS[1]
local due_index_key = KEYS[2]
local spec = ARGV[1]
local next_occurrence = ARGV[2]
local due_index_member = ARGV[3]

if redis.call('EXISTS', schedule_key) == 0 then return { R.NONE } end
redis.call('HSET', schedule_key, 'spec', spec, 'next', next_occurrence)
redis.call('HINCRBY', schedule_key, 'rev', 1)
sched_reindex(schedule_key, due_index_key, due_index_member, now_ms())
return { R.OK, unpack(sched_record(schedule_key)) }
