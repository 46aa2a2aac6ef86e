-- chargeTokens: adds one model call's tokens to the tenant's minute and day counters.
-- KEYS[1] counters hash (fields in _quota.lua)
-- ARGV[1] tokens (an integer >= 0)
-- Replies: {R.OK}
--- @include "clock"
--- @include "num"
--- @include "quota"

local counters_key = KEYS[1]
local added_tokens = ARGV[1]

local now = now_ms()
local tokens = tonumber(added_tokens)
local u = quota_usage(nil, counters_key, now)
redis.call('HSET', counters_key, 'kw', num(u.minute), 'kc', num(u.kmin + tokens), 'dw', num(u.day), 'dc', num(u.kday + tokens))
redis.call('PEXPIRE', counters_key, 2 * QUOTA_DAY_MS)
return { R.OK }
