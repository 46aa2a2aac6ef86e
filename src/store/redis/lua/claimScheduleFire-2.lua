-- claimScheduleFire: claims the schedule's due occurrence for a while, like a lease: checks it
-- is due by the Redis clock, not paused and not under a live claim, then records the claim and
-- moves its due time to the claim's expiry. A lapsed claim is taken over with the SAME
-- occurrence, whose fire may already have happened (the fire is idempotent on it).
-- KEYS[1] schedule hash, KEYS[2] due index
-- ARGV[1] claim token, ARGV[2] claim TTL ms, ARGV[3] due-index member
-- Replies: {R.OK, occurrence, 1 run-now | 0 regular, now, record...}; {R.NONE} nothing to claim
--- @include "clock"
--- @include "num"
--- @include "schedule"

local schedule_key = KEYS[1]
local due_index_key = KEYS[2]
local claim_token = ARGV[1]
local claim_ttl_ms = ARGV[2]
local due_index_member = ARGV[3]

local now = now_ms()
if redis.call('EXISTS', schedule_key) == 0 then return { R.NONE } end
if redis.call('HGET', schedule_key, 'paused') == '1' then return { R.NONE } end
if sched_live_claim(schedule_key, now) then return { R.NONE } end
local c = redis.call('HMGET', schedule_key, 'ctok', 'cat', 'crn', 'next', 'runnow')
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
local exp = now + tonumber(claim_ttl_ms)
redis.call('HSET', schedule_key, 'ctok', claim_token, 'cat', at, 'cexp', num(exp), 'crn', rn)
redis.call('ZADD', due_index_key, num(exp), due_index_member)
return { R.OK, at, tonumber(rn), num(now), unpack(sched_record(schedule_key)) }
