-- renewLeases: renewLease for every key in one step, so a replica renews all the leases it holds
-- at once. Each lease is judged alone: a stale fence renews nothing and leaves the others.
-- The caller gives the key count (n in the file name); on Cluster all keys share one slot.
-- KEYS[1..] lease hashes, one per fence
-- ARGV[1] ttl in ms   ARGV[2..] lease token and fencing token per key, in KEYS order
-- Replies: {R.OK, new expiry or 0 per key}   0: no live lease, or another one; nothing renewed
local now = now_ms()
local ttl = tonumber(ARGV[1])
local reply = { R.OK }
for i = 1, #KEYS do
  local lease = live_lease(KEYS[i], now)
  if fence_matches(lease, ARGV[2 * i], ARGV[2 * i + 1]) then
    lease.exp = now + ttl
    redis.call('HSET', KEYS[i], 'exp', num(lease.exp))
    reply[#reply + 1] = lease.exp
  else
    reply[#reply + 1] = 0
  end
end
return reply
