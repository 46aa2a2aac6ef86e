-- runScheduleNow: asks for one fire at the Redis clock's now, besides the regular timing; a
-- request already waiting is kept (one fire answers both).
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] due-index member
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
if redis.call('EXISTS', KEYS[1]) == 0 then return { R.NONE } end
local now = now_ms()
if (redis.call('HGET', KEYS[1], 'runnow') or '') == '' then
  redis.call('HSET', KEYS[1], 'runnow', num(now))
end
sched_reindex(KEYS[1], KEYS[2], ARGV[1], now)
return { R.OK, unpack(sched_record(KEYS[1])) }
