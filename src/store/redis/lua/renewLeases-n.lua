-- renewLeases: renewLease for every lease in one step, so a replica renews all the leases it
-- holds at once. Each lease is judged alone: a stale fence renews nothing and leaves the others.
-- A renewed lease's session keeps its running-turn marker (signals.ts) as long: a turn that runs
-- past one TTL stays findable by CancelTurn and its answers.
-- The caller gives the key count (n in the file name); on Cluster all keys share one slot.
-- KEYS[1..] per fence, in pairs: the lease hash, then the session's running-turn marker
-- ARGV[1] ttl in ms   ARGV[2..] lease token and fencing token per fence, in KEYS order
-- Replies: {R.OK, new expiry or 0 per fence}   0: no live lease, or another one; nothing renewed
--- @include "clock"
--- @include "lease"
--- @include "num"

local ttl_ms = ARGV[1]

local now = now_ms()
local ttl = tonumber(ttl_ms)
local reply = { R.OK }
for i = 1, #KEYS / 2 do
  local lease_key = KEYS[2 * i - 1]
  local lease = live_lease(lease_key, now)
  if fence_matches(lease, ARGV[2 * i], ARGV[2 * i + 1]) then
    lease.exp = now + ttl
    redis.call('HSET', lease_key, 'exp', num(lease.exp))
    redis.call('PEXPIRE', KEYS[2 * i], ttl)
    reply[#reply + 1] = lease.exp
  else
    reply[#reply + 1] = 0
  end
end
return reply
