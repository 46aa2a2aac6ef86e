-- renewLease: extend the live lease named exactly by the fence.
-- KEYS[1] lease hash
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] ttl in ms
-- Replies: {R.OK, tok, gen, exp, ownerJson, 0}
--          {R.LEASE_EXPIRED}   no live lease, or another one
--- @include "clock"
--- @include "lease"
--- @include "num"

local lease_key = KEYS[1]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local ttl_ms = ARGV[3]

local now = now_ms()
local current = live_lease(lease_key, now)
if not fence_matches(current, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
current.exp = now + tonumber(ttl_ms)
redis.call('HSET', lease_key, 'exp', num(current.exp))
return lease_reply(R.OK, current, false)
