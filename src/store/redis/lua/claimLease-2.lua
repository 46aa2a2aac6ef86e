-- claimLease: acquire the session execution lease, re-enter it, or report the live holder. A
-- fresh acquisition also says whether the session was vacant: no lease hash at all (never held,
-- or released), as opposed to one that expired.
-- KEYS[1] lease hash          KEYS[2] lease generation counter (never deleted; see acquire_lease)
-- ARGV[1] owner JSON   ARGV[2] owner id   ARGV[3] incarnation id
-- ARGV[4] lease token for a fresh acquisition   ARGV[5] ttl in ms
-- Replies: {R.OK, tok, gen, exp, ownerJson, reentered (0|1), vacant (0|1)}
--          {R.BUSY, tok, gen, exp, holderJson, 0}
--- @include "clock"
--- @include "lease-grant"
--- @include "lease"
--- @include "num"

local lease_key = KEYS[1]
local gen_key = KEYS[2]
local owner_json = ARGV[1]
local owner_id = ARGV[2]
local incarnation_id = ARGV[3]
local lease_token = ARGV[4]
local ttl_ms = ARGV[5]

local now = now_ms()
local stored = read_lease(lease_key)
local current = stored
if current and current.exp <= now then current = nil end
if current then
  if current.oid == owner_id and current.inc == incarnation_id then
    current.exp = now + tonumber(ttl_ms)
    redis.call('HSET', lease_key, 'exp', num(current.exp))
    local reply = lease_reply(R.OK, current, true)
    reply[7] = 0
    return reply
  end
  return lease_reply(R.BUSY, current, false)
end
local lease = acquire_lease(lease_key, gen_key, owner_json, owner_id, incarnation_id, lease_token, now, now + tonumber(ttl_ms))
local reply = lease_reply(R.OK, lease, false)
reply[7] = stored and 0 or 1
return reply
