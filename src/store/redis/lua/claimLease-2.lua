-- claimLease: acquire the session execution lease, re-enter it, or report the live holder.
-- KEYS[1] lease hash          KEYS[2] lease generation counter (never deleted)
-- ARGV[1] owner JSON   ARGV[2] owner id   ARGV[3] incarnation id
-- ARGV[4] lease token for a fresh acquisition   ARGV[5] ttl in ms
-- Replies: {R.OK, tok, gen, exp, ownerJson, reentered (0|1)}
--          {R.BUSY, tok, gen, exp, holderJson, 0}
local now = now_ms()
local current = live_lease(KEYS[1], now)
if current then
  if current.oid == ARGV[2] and current.inc == ARGV[3] then
    current.exp = now + tonumber(ARGV[5])
    redis.call('HSET', KEYS[1], 'exp', num(current.exp))
    return lease_reply(R.OK, current, true)
  end
  return lease_reply(R.BUSY, current, false)
end
local lease = acquire_lease(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], now + tonumber(ARGV[5]))
return lease_reply(R.OK, lease, false)
