-- Included as "quota": a tenant's quota counters (ADR 0015). Reads no KEYS or ARGV (ADR 0035).
--- @include "num"

-- A tenant's quota counters as of `now` (ADR 0015): fixed windows by the Redis clock, so a count
-- stored for an earlier window reads 0. Counter hash fields: tw/tc (turn minute window, turns),
-- kw/kc (token minute window, tokens), dw/dc (day window, tokens). Running turns are the slots
-- whose expiry is after now (slots_key may be nil when the caller needs no slots).
local QUOTA_MINUTE_MS = 60000
local QUOTA_DAY_MS = 86400000
local function quota_usage(slots_key, counters_key, now)
  local minute = math.floor(now / QUOTA_MINUTE_MS)
  local day = math.floor(now / QUOTA_DAY_MS)
  local c = redis.call('HMGET', counters_key, 'tw', 'tc', 'kw', 'kc', 'dw', 'dc')
  local function at(window, count, current)
    if window and tonumber(window) == current then return tonumber(count) or 0 end
    return 0
  end
  local running = 0
  if slots_key then running = redis.call('ZCOUNT', slots_key, '(' .. num(now), '+inf') end
  return {
    minute = minute, day = day, running = running,
    turns = at(c[1], c[2], minute), kmin = at(c[3], c[4], minute), kday = at(c[5], c[6], day),
    minute_reset = (minute + 1) * QUOTA_MINUTE_MS, day_reset = (day + 1) * QUOTA_DAY_MS,
  }
end

-- The first token limit used up ({name, ms until it may free}), or nil. 0 as a max: no limit.
local function quota_tokens_over(u, per_minute, per_day, now)
  if per_minute > 0 and u.kmin >= per_minute then return { 'tokens_per_minute', u.minute_reset - now } end
  if per_day > 0 and u.kday >= per_day then return { 'tokens_per_day', u.day_reset - now } end
  return nil
end

-- Whether `holder` may start a turn now (admitTurn's checks; reads only): 'readmitted' when it
-- holds a live slot already; 'admitted' with the usage to take the slot with (quota_take_slot);
-- else {limit name, ms until it may free}. A max of 0: no such limit.
local function quota_admission(slots_key, counters_key, holder, now, max_running, max_turns, max_tpm, max_tpd)
  local own = redis.call('ZSCORE', slots_key, holder)
  if own and tonumber(own) > now then return 'readmitted', nil end
  local u = quota_usage(slots_key, counters_key, now)
  if max_running > 0 and u.running >= max_running then
    local first = redis.call('ZRANGEBYSCORE', slots_key, '(' .. num(now), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    return { 'concurrent_turns', tonumber(first[2]) - now }, u
  end
  if max_turns > 0 and u.turns >= max_turns then return { 'turns_per_minute', u.minute_reset - now }, u end
  local over = quota_tokens_over(u, max_tpm, max_tpd, now)
  if over then return over, u end
  return 'admitted', u
end

-- The writes of an admission quota_admission allowed: a readmitted holder's slot renewed; an
-- admitted one's slot taken (expired slots swept) and its turn counted in this minute.
local function quota_take_slot(slots_key, counters_key, holder, ttl, now, verdict, u)
  if verdict == 'readmitted' then
    redis.call('ZADD', slots_key, num(now + ttl), holder)
    return
  end
  redis.call('ZREMRANGEBYSCORE', slots_key, '-inf', num(now))
  redis.call('ZADD', slots_key, num(now + ttl), holder)
  redis.call('HSET', counters_key, 'tw', num(u.minute), 'tc', u.turns + 1)
  redis.call('PEXPIRE', counters_key, 2 * QUOTA_DAY_MS)
end
