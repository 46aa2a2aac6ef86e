-- createSchedule: stores a new schedule, or answers the existing one under that id (same spec:
-- an idempotent replay; other spec: a conflict that changes nothing).
-- KEYS[1] schedule hash, KEYS[2] the tenant's schedule index, KEYS[3] due index
-- ARGV[1] tenant, ARGV[2] schedule id, ARGV[3] spec, ARGV[4] next occurrence ('' for none),
-- ARGV[5] due-index member
-- Replies: {R.OK, record...} created; {R.DEDUPLICATED, record...} same spec; {R.EXISTS, record...}
local existing = redis.call('HGET', KEYS[1], 'spec')
if existing then
  if existing == ARGV[3] then return { R.DEDUPLICATED, unpack(sched_record(KEYS[1])) } end
  return { R.EXISTS, unpack(sched_record(KEYS[1])) }
end
redis.call('HSET', KEYS[1], 'tenant', ARGV[1], 'id', ARGV[2], 'spec', ARGV[3], 'rev', 1,
  'paused', 0, 'reason', '', 'next', ARGV[4], 'last', '', 'runnow', '')
redis.call('ZADD', KEYS[2], 0, ARGV[2])
sched_reindex(KEYS[1], KEYS[3], ARGV[5], now_ms())
return { R.OK, unpack(sched_record(KEYS[1])) }
