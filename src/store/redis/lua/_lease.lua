-- Included as "lease": reading a lease and checking its fence. Reads no KEYS or ARGV (ADR 0035).
--
-- Lease hash fields: tok (lease token), gen (fencing token), exp (expiry, epoch ms by the Redis
-- clock), oid (owner id), inc (incarnation id), own (owner JSON as the caller sent it).
--- @include "num"

local function read_lease(key)
  local v = redis.call('HMGET', key, 'tok', 'gen', 'exp', 'oid', 'inc', 'own')
  if not v[1] then return nil end
  return { tok = v[1], gen = tonumber(v[2]), exp = tonumber(v[3]), oid = v[4], inc = v[5], own = v[6] }
end

-- The lease only while it is live: expiresAt <= now is expired (a TTL of 0 expires at once).
local function live_lease(key, now)
  local lease = read_lease(key)
  if lease and lease.exp > now then return lease end
  return nil
end

local function fence_matches(lease, tok, gen)
  return lease ~= nil and lease.tok == tok and lease.gen == tonumber(gen)
end

local function lease_reply(code, lease, reentered)
  return { code, lease.tok, num(lease.gen), num(lease.exp), lease.own, reentered and 1 or 0 }
end
