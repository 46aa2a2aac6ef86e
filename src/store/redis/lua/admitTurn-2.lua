-- admitTurn: lets one turn of a tenant start when every limit has room, in one step: a slot per
-- running turn against concurrent_turns, then this minute's turns, this minute's and today's
-- tokens. All checks come before the first write, so a refusal changes nothing. The same holder
-- with a live slot is admitted again without being counted twice (a retry after an unknown outcome).
-- KEYS[1] slots sorted set   KEYS[2] counters hash (fields in _quota.lua)
-- ARGV[1] holder   ARGV[2] slot ttl in ms   ARGV[3] concurrent_turns max   ARGV[4] turns_per_minute
-- max   ARGV[5] tokens_per_minute max   ARGV[6] tokens_per_day max   (a max of 0: no such limit)
-- Replies: {R.OK, readmitted 0|1}
--          {R.QUOTA_REFUSED, limit name, ms until it may free (at least 1)}
--- @include "clock"
--- @include "quota"

local slots_key = KEYS[1]
local counters_key = KEYS[2]
local holder = ARGV[1]
local slot_ttl_ms = ARGV[2]
local max_running = ARGV[3]
local max_turns_per_minute = ARGV[4]
local max_tokens_per_minute = ARGV[5]
local max_tokens_per_day = ARGV[6]

local now = now_ms()
local ttl = tonumber(slot_ttl_ms)
local verdict, u = quota_admission(slots_key, counters_key, holder, now, tonumber(max_running),
  tonumber(max_turns_per_minute), tonumber(max_tokens_per_minute), tonumber(max_tokens_per_day))
if type(verdict) == 'table' then return { R.QUOTA_REFUSED, verdict[1], math.max(1, verdict[2]) } end
quota_take_slot(slots_key, counters_key, holder, ttl, now, verdict, u)
if verdict == 'readmitted' then return { R.OK, 1 } end
return { R.OK, 0 }
