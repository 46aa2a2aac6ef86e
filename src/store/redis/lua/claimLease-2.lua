-- claimLease: acquire the session execution lease, re-enter it, or report the live holder. A
-- fresh acquisition also says whether the session was vacant: no lease hash at all (never held,
-- or released), as opposed to one that expired.
-- KEYS[1] lease hash          KEYS[2] lease generation counter (never deleted; see acquire_lease)
-- ARGV[1] owner JSON   ARGV[2] owner id   ARGV[3] incarnation id
-- ARGV[4] lease token for a fresh acquisition   ARGV[5] ttl in ms
-- Replies: {R.OK, tok, gen, exp, ownerJson, reentered (0|1), vacant (0|1)}
--          {R.BUSY, tok, gen, exp, holderJson, 0}
local now = now_ms()
local stored = read_lease(KEYS[1])
local current = stored
if current and current.exp <= now then current = nil end
if current then
  if current.oid == ARGV[2] and current.inc == ARGV[3] then
    current.exp = now + tonumber(ARGV[5])
    redis.call('HSET', KEYS[1], 'exp', num(current.exp))
    local reply = lease_reply(R.OK, current, true)
    reply[7] = 0
    return reply
  end
  return lease_reply(R.BUSY, current, false)
end
local lease = acquire_lease(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], now, now + tonumber(ARGV[5]))
local reply = lease_reply(R.OK, lease, false)
reply[7] = stored and 0 or 1
return reply
