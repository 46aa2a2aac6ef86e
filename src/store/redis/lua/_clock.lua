-- Included as "clock": the Redis server clock. Reads no KEYS or ARGV (ADR 0035).

-- The Redis server clock is the only clock of the Redis backend.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
