-- readDueSchedules: the schedules whose due time has come by the Redis clock (a hint: the claim
-- decides), and the earliest later due time.
-- KEYS[1] due index
-- ARGV[1] limit
-- Replies: {R.OK, now, next due time ('' for none), member...}
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', num(now), 'LIMIT', 0, tonumber(ARGV[1]))
local later = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. num(now), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local reply = { R.OK, num(now), later[2] or '' }
for i = 1, #due do reply[#reply + 1] = due[i] end
return reply
