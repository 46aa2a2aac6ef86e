-- createSchedule: stores a new schedule, or answers the existing one under that id (same spec:
-- an idempotent replay; other spec: a conflict that changes nothing).
-- KEYS[1] schedule hash, KEYS[2] the tenant's schedule index, KEYS[3] due index
-- ARGV[1] tenant, ARGV[2] schedule id, ARGV[3] spec, ARGV[4] next occurrence ('' for none),
-- ARGV[5] due-index member
-- Replies: {R.OK, record...} created; {R.DEDUPLICATED, record...} same spec; {R.EXISTS, record...}
--- @include "clock"
--- @include "schedule"

local schedule_key = KEYS[1]
local tenant_index_key = KEYS[2]
local due_index_key = KEYS[3]
local tenant = ARGV[1]
local schedule_id = ARGV[2]
local spec = ARGV[3]
local next_occurrence = ARGV[4]
local due_index_member = ARGV[5]

local existing = redis.call('HGET', schedule_key, 'spec')
if existing then
  if existing == spec then return { R.DEDUPLICATED, unpack(sched_record(schedule_key)) } end
  return { R.EXISTS, unpack(sched_record(schedule_key)) }
end
redis.call('HSET', schedule_key, 'tenant', tenant, 'id', schedule_id, 'spec', spec, 'rev', 1,
  'paused', 0, 'reason', '', 'next', next_occurrence, 'last', '', 'runnow', '')
redis.call('ZADD', tenant_index_key, 0, schedule_id)
sched_reindex(schedule_key, due_index_key, due_index_member, now_ms())
return { R.OK, unpack(sched_record(schedule_key)) }
