-- readDueSchedules: the schedules whose due time has come by the Redis clock (a hint: the claim
-- decides), and the earliest later due time.
-- KEYS[1] due index
-- ARGV[1] limit
-- Replies: {R.OK, now, next due time ('' for none), member...}
--- @include "clock"
--- @include "num"

local due_index_key = KEYS[1]
local limit = ARGV[1]

local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', due_index_key, '-inf', num(now), 'LIMIT', 0, tonumber(limit))
local later = redis.call('ZRANGEBYSCORE', due_index_key, '(' .. num(now), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local reply = { R.OK, num(now), later[2] or '' }
for i = 1, #due do reply[#reply + 1] = due[i] end
return reply
