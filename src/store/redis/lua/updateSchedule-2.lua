-- updateSchedule: replaces the spec and the next regular occurrence and bumps the revision, so a
-- fire claimed before the update settles without moving the new timing.
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] spec, ARGV[2] next occurrence ('' for none), ARGV[3] due-index member
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
if redis.call('EXISTS', KEYS[1]) == 0 then return { R.NONE } end
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'next', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'rev', 1)
sched_reindex(KEYS[1], KEYS[2], ARGV[3], now_ms())
return { R.OK, unpack(sched_record(KEYS[1])) }
