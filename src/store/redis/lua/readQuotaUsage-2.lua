-- readQuotaUsage: a tenant's counters as of now; reads only.
-- KEYS[1] slots sorted set   KEYS[2] counters hash (fields in _shared.lua quota_usage)
-- ARGV: none
-- Replies: {R.OK, running turns, turns this minute, tokens this minute, tokens today,
--           minute window end, day window end, now}   (times in epoch ms by the Redis clock)
local now = now_ms()
local u = quota_usage(KEYS[1], KEYS[2], now)
return { R.OK, u.running, u.turns, num(u.kmin), num(u.kday), num(u.minute_reset), num(u.day_reset), num(now) }
