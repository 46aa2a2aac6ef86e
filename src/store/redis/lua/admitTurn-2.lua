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
--- @include "num"
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
local slots, turns = tonumber(max_running), tonumber(max_turns_per_minute)
local own = redis.call('ZSCORE', slots_key, holder)
if own and tonumber(own) > now then
  redis.call('ZADD', slots_key, num(now + ttl), holder)
  return { R.OK, 1 }
end
local u = quota_usage(slots_key, counters_key, now)
local refused = nil
if slots > 0 and u.running >= slots then
  local first = redis.call('ZRANGEBYSCORE', slots_key, '(' .. num(now), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  refused = { 'concurrent_turns', tonumber(first[2]) - now }
elseif turns > 0 and u.turns >= turns then
  refused = { 'turns_per_minute', u.minute_reset - now }
else
  refused = quota_tokens_over(u, tonumber(max_tokens_per_minute), tonumber(max_tokens_per_day), now)
end
if refused then return { R.QUOTA_REFUSED, refused[1], math.max(1, refused[2]) } end
redis.call('ZREMRANGEBYSCORE', slots_key, '-inf', num(now))
redis.call('ZADD', slots_key, num(now + ttl), holder)
redis.call('HSET', counters_key, 'tw', num(u.minute), 'tc', u.turns + 1)
redis.call('PEXPIRE', counters_key, 2 * QUOTA_DAY_MS)
return { R.OK, 0 }
