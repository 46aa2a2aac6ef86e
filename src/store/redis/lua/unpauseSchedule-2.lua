-- unpauseSchedule: resumes a paused schedule at the next occurrence its caller computed from
-- now (missed occurrences while paused are not fired); a running schedule is left as it is.
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] next occurrence ('' for none), ARGV[2] due-index member
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
if redis.call('EXISTS', KEYS[1]) == 0 then return { R.NONE } end
if redis.call('HGET', KEYS[1], 'paused') == '1' then
  redis.call('HSET', KEYS[1], 'paused', 0, 'reason', '', 'next', ARGV[1])
  sched_reindex(KEYS[1], KEYS[2], ARGV[2], now_ms())
end
return { R.OK, unpack(sched_record(KEYS[1])) }
