-- chargeTokens: adds one model call's tokens to the tenant's minute and day counters.
-- KEYS[1] counters hash (fields in _shared.lua quota_usage)
-- ARGV[1] tokens (an integer >= 0)
-- Replies: {R.OK}
local now = now_ms()
local tokens = tonumber(ARGV[1])
local u = quota_usage(nil, KEYS[1], now)
redis.call('HSET', KEYS[1], 'kw', num(u.minute), 'kc', num(u.kmin + tokens), 'dw', num(u.day), 'dc', num(u.kday + tokens))
redis.call('PEXPIRE', KEYS[1], 2 * QUOTA_DAY_MS)
return { R.OK }
