-- renewTurnSlots: extends the live slots of a tenant's holders (a replica's lease renewals carry
-- its slots along). An expired or released slot is not brought back: its turn re-admits.
-- KEYS[1] slots sorted set
-- ARGV[1] ttl in ms   ARGV[2..] holders
-- Replies: {R.OK, 1 renewed | 0 gone, per holder in ARGV order}
--- @include "clock"
--- @include "num"

local slots_key = KEYS[1]
local ttl_ms = ARGV[1]

local now = now_ms()
local ttl = tonumber(ttl_ms)
local reply = { R.OK }
for i = 2, #ARGV do
  local own = redis.call('ZSCORE', slots_key, ARGV[i])
  if own and tonumber(own) > now then
    redis.call('ZADD', slots_key, num(now + ttl), ARGV[i])
    reply[#reply + 1] = 1
  else
    reply[#reply + 1] = 0
  end
end
return reply
