-- deleteSchedule: removes a schedule, its runs and its index entries.
-- KEYS[1] schedule hash, KEYS[2] the tenant's schedule index, KEYS[3] due index, KEYS[4] runs list
-- ARGV[1] schedule id, ARGV[2] due-index member
-- Replies: {R.OK, 1 deleted | 0 there was none}

local schedule_key = KEYS[1]
local tenant_index_key = KEYS[2]
local due_index_key = KEYS[3]
local runs_key = KEYS[4]
local schedule_id = ARGV[1]
local due_index_member = ARGV[2]

local existed = redis.call('EXISTS', schedule_key)
redis.call('DEL', schedule_key, runs_key)
redis.call('ZREM', tenant_index_key, schedule_id)
redis.call('ZREM', due_index_key, due_index_member)
return { R.OK, existed }
