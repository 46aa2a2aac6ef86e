-- checkTokenQuota: whether the tenant's token limits still have room; reads only.
-- KEYS[1] counters hash (fields in _quota.lua)
-- ARGV[1] tokens_per_minute max   ARGV[2] tokens_per_day max   (0: no such limit)
-- Replies: {R.OK}   {R.QUOTA_REFUSED, limit name, ms until it may free (at least 1)}
--- @include "clock"
--- @include "quota"

local counters_key = KEYS[1]
local max_tokens_per_minute = ARGV[1]
local max_tokens_per_day = ARGV[2]

local now = now_ms()
local over = quota_tokens_over(quota_usage(nil, counters_key, now), tonumber(max_tokens_per_minute), tonumber(max_tokens_per_day), now)
if over then return { R.QUOTA_REFUSED, over[1], math.max(1, over[2]) } end
return { R.OK }
