-- claimScheduleFire: claims the schedule's due occurrence for a while, like a lease: checks it
-- is due by the Redis clock, not paused and not under a live claim, then records the claim and
-- moves its due time to the claim's expiry. A lapsed claim is taken over with the SAME
-- occurrence, whose fire may already have happened (the fire is idempotent on it).
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] claim token, ARGV[2] claim TTL ms, ARGV[3] due-index member
-- Replies: {R.OK, occurrence, 1 run-now | 0 regular, now, record...}; {R.NONE} nothing to claim
local now = now_ms()
if redis.call('EXISTS', KEYS[1]) == 0 then return { R.NONE } end
if redis.call('HGET', KEYS[1], 'paused') == '1' then return { R.NONE } end
if sched_live_claim(KEYS[1], now) then return { R.NONE } end
local c = redis.call('HMGET', KEYS[1], 'ctok', 'cat', 'crn', 'next', 'runnow')
local at, rn
if c[1] and c[1] ~= '' then
  at, rn = c[2], c[3]
elseif c[5] and c[5] ~= '' and tonumber(c[5]) <= now then
  at, rn = c[5], '1'
elseif c[4] and c[4] ~= '' and tonumber(c[4]) <= now then
  at, rn = c[4], '0'
else
  return { R.NONE }
end
local exp = now + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'ctok', ARGV[1], 'cat', at, 'cexp', num(exp), 'crn', rn)
redis.call('ZADD', KEYS[2], num(exp), ARGV[3])
return { R.OK, at, tonumber(rn), num(now), unpack(sched_record(KEYS[1])) }
