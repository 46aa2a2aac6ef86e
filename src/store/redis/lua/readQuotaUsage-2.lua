-- readQuotaUsage: a tenant's counters as of now; reads only.
-- KEYS[1] slots sorted set   KEYS[2] counters hash (fields in _quota.lua)
-- ARGV: none
-- Replies: {R.OK, running turns, turns this minute, tokens this minute, tokens today,
--           minute window end, day window end, now}   (times in epoch ms by the Redis clock)
--- @include "clock"
--- @include "num"
--- @include "quota"

local slots_key = KEYS[1]
local counters_key = KEYS[2]

local now = now_ms()
local u = quota_usage(slots_key, counters_key, now)
return { R.OK, u.running, u.turns, num(u.kmin), num(u.kday), num(u.minute_reset), num(u.day_reset), num(now) }
