-- unpauseSchedule: resumes a paused schedule at the next occurrence its caller computed from
-- now (missed occurrences while paused are not fired); a running schedule is left as it is.
-- With a missed run (a one-off whose instant passed while paused): recorded, and the schedule
-- resumes at ARGV[1], only when no claim is held (a claimed occurrence is its claim's to settle)
-- and the stored next occurrence is ARGV[3], due by the Redis clock; else the stored one is kept.
-- KEYS[1] schedule hash, KEYS[2] due index, KEYS[3] runs list
-- ARGV[1] next occurrence ('' for none), ARGV[2] due-index member,
-- ARGV[3] missed occurrence ('' for none), ARGV[4] missed run JSON, ARGV[5] runs kept
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
if redis.call('EXISTS', KEYS[1]) == 0 then return { R.NONE } end
if redis.call('HGET', KEYS[1], 'paused') == '1' then
  local now = now_ms()
  redis.call('HSET', KEYS[1], 'paused', 0, 'reason', '')
  if ARGV[3] == '' then
    redis.call('HSET', KEYS[1], 'next', ARGV[1])
  else
    local s = redis.call('HMGET', KEYS[1], 'ctok', 'next')
    local unclaimed = not s[1] or s[1] == ''
    if unclaimed and s[2] == ARGV[3] and tonumber(ARGV[3]) <= now then
      redis.call('HSET', KEYS[1], 'next', ARGV[1])
      redis.call('LPUSH', KEYS[3], ARGV[4])
      redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[5]) - 1)
    end
  end
  sched_reindex(KEYS[1], KEYS[2], ARGV[2], now)
end
return { R.OK, unpack(sched_record(KEYS[1])) }
