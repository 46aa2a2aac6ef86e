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
