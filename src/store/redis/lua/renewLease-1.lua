-- renewLease: extend the live lease named exactly by the fence.
-- KEYS[1] lease hash
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] ttl in ms
-- Replies: {R.OK, tok, gen, exp, ownerJson, 0}
--          {R.LEASE_EXPIRED}   no live lease, or another one
local now = now_ms()
local current = live_lease(KEYS[1], now)
if not fence_matches(current, ARGV[1], ARGV[2]) then return { R.LEASE_EXPIRED } end
current.exp = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'exp', num(current.exp))
return lease_reply(R.OK, current, false)
