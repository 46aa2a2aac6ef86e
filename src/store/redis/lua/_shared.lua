-- Helpers prepended to every script after the reply table `R` (see scripts.ts). Not a script
-- of its own: it holds no KEYS or ARGV and writes nothing.
--
-- Lease hash fields: tok (lease token), gen (fencing token), exp (expiry, epoch ms by the Redis
-- clock), oid (owner id), inc (incarnation id), own (owner JSON as the caller sent it).

-- Scripts that read TIME and then write must replicate their effects, not the script (Redis < 5).
if redis.replicate_commands then redis.replicate_commands() end

-- The Redis server clock is the only clock of the Redis backend.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Integers as decimal strings without exponent (tostring would switch to 1e+15 form).
local function num(x)
  return string.format('%.0f', x)
end

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

-- New generation: the counter only ever grows, so the token beats every earlier one.
local function acquire_lease(lease_key, gen_key, own, oid, inc, tok, exp)
  local gen = redis.call('INCR', gen_key)
  redis.call('HSET', lease_key, 'tok', tok, 'gen', gen, 'exp', num(exp), 'oid', oid, 'inc', inc, 'own', own)
  return { tok = tok, gen = gen, exp = exp, oid = oid, inc = inc, own = own }
end

-- HMGET in chunks, so long queues never overflow Lua's unpack limit. Missing fields are false.
local function hmget_all(key, ids)
  local out = {}
  local chunk = 500
  for i = 1, #ids, chunk do
    local last = math.min(i + chunk - 1, #ids)
    local part = redis.call('HMGET', key, unpack(ids, i, last))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end

-- A ready item, or one claimed by a generation the fence has superseded.
local function claimable(item, ready_state, gen)
  return item.state == ready_state or (item.state == 'claimed' and item.claimFencingToken < gen)
end

local function mark_claimed(key, id, item, gen, claim_id)
  item.state = 'claimed'
  item.claimFencingToken = gen
  item.claimId = claim_id
  local encoded = cjson.encode(item)
  redis.call('HSET', key, id, encoded)
  return encoded
end
