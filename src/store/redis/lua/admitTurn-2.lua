-- admitTurn: lets one turn of a tenant start when every limit has room, in one step: a slot per
-- running turn against concurrent_turns, then this minute's turns, this minute's and today's
-- tokens. All checks come before the first write, so a refusal changes nothing. The same holder
-- with a live slot is admitted again without being counted twice (a retry after an unknown outcome).
-- KEYS[1] slots sorted set   KEYS[2] counters hash (fields in _shared.lua quota_usage)
-- ARGV[1] holder   ARGV[2] slot ttl in ms   ARGV[3] concurrent_turns max   ARGV[4] turns_per_minute
-- max   ARGV[5] tokens_per_minute max   ARGV[6] tokens_per_day max   (a max of 0: no such limit)
-- Replies: {R.OK, readmitted 0|1}
--          {R.QUOTA_REFUSED, limit name, ms until it may free (at least 1)}
local now = now_ms()
local holder = ARGV[1]
local ttl = tonumber(ARGV[2])
local slots, turns = tonumber(ARGV[3]), tonumber(ARGV[4])
local own = redis.call('ZSCORE', KEYS[1], holder)
if own and tonumber(own) > now then
  redis.call('ZADD', KEYS[1], num(now + ttl), holder)
  return { R.OK, 1 }
end
local u = quota_usage(KEYS[1], KEYS[2], now)
local refused = nil
if slots > 0 and u.running >= slots then
  local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. num(now), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  refused = { 'concurrent_turns', tonumber(first[2]) - now }
elseif turns > 0 and u.turns >= turns then
  refused = { 'turns_per_minute', u.minute_reset - now }
else
  refused = quota_tokens_over(u, tonumber(ARGV[5]), tonumber(ARGV[6]), now)
end
if refused then return { R.QUOTA_REFUSED, refused[1], math.max(1, refused[2]) } end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', num(now))
redis.call('ZADD', KEYS[1], num(now + ttl), holder)
redis.call('HSET', KEYS[2], 'tw', num(u.minute), 'tc', u.turns + 1)
redis.call('PEXPIRE', KEYS[2], 2 * QUOTA_DAY_MS)
return { R.OK, 0 }
