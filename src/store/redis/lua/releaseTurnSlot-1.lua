-- releaseTurnSlot: gives a turn's slot back. Idempotent: a slot released or expired before is 0.
-- KEYS[1] slots sorted set
-- ARGV[1] holder
-- Replies: {R.OK, 1 when a live slot was released, else 0}
local now = now_ms()
local own = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
if own and tonumber(own) > now then return { R.OK, 1 } end
return { R.OK, 0 }
