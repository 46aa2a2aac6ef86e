-- pauseSchedule: a paused schedule never fires (a live claim still settles). Idempotent.
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] reason, ARGV[2] due-index member
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
if redis.call('EXISTS', KEYS[1]) == 0 then return { R.NONE } end
redis.call('HSET', KEYS[1], 'paused', 1, 'reason', ARGV[1])
sched_reindex(KEYS[1], KEYS[2], ARGV[2], now_ms())
return { R.OK, unpack(sched_record(KEYS[1])) }
