-- Included as "chunked": commands over long lists, in chunks below Lua's unpack limit. Reads no
-- KEYS or ARGV (ADR 0035).

-- HMGET in chunks, so long queues never overflow Lua's unpack limit. Missing fields are false.
local function hmget_all(key, ids)
  local out = {}
  local chunk = 500
  for i = 1, #ids, chunk do
    local last = math.min(i + chunk - 1, #ids)
    local part = redis.call('HMGET', key, unpack(ids, i, last))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end

local function rpush_all(key, values)
  for i = 1, #values, 500 do
    redis.call('RPUSH', key, unpack(values, i, math.min(i + 499, #values)))
  end
end
