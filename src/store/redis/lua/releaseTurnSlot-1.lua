-- releaseTurnSlot: gives a turn's slot back. Idempotent: a slot released or expired before is 0.
-- KEYS[1] slots sorted set
-- ARGV[1] holder
-- Replies: {R.OK, 1 when a live slot was released, else 0}
--- @include "clock"

local slots_key = KEYS[1]
local holder = ARGV[1]

local now = now_ms()
local own = redis.call('ZSCORE', slots_key, holder)
redis.call('ZREM', slots_key, holder)
if own and tonumber(own) > now then return { R.OK, 1 } end
return { R.OK, 0 }
