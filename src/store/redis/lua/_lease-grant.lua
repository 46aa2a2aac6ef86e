-- Included as "lease-grant": granting a lease its fencing token. Reads no KEYS or ARGV
-- (ADR 0035). Lease hash fields: see _lease.lua.
--- @include "num"

-- New generation: one above the counter, which only ever grows, and never below the Redis clock
-- in ms. The clock floor is what keeps tokens from repeating across a failover (ADR 0022): a
-- promoted replica that never received the last claims has an older counter, but its clock has
-- moved past the lost tokens, so it still issues a greater one. Milliseconds stay below 10^13
-- until the year 2286: exact in a Lua number and in cjson's 14 significant digits.
local function acquire_lease(lease_key, gen_key, own, oid, inc, tok, now, exp)
  local gen = math.max(tonumber(redis.call('GET', gen_key) or '0') + 1, now)
  redis.call('SET', gen_key, num(gen))
  redis.call('HSET', lease_key, 'tok', tok, 'gen', num(gen), 'exp', num(exp), 'oid', oid, 'inc', inc, 'own', own)
  return { tok = tok, gen = gen, exp = exp, oid = oid, inc = inc, own = own }
end
