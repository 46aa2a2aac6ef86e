-- claimIdempotencyKey: a tenant's Idempotency-Key for one kind of create names the id it makes
-- (ADR 0037). Checks before writes: a held key is answered and left as it is.
-- KEYS[1] the key's record (string "<request hash>:<id>", expiring)
-- ARGV[1] request hash (64 hex digits)   ARGV[2] id a first claim names   ARGV[3] TTL (ms)
-- Replies: {R.OK, id, 1} the key was unheld: now held, naming ARGV[2]
--          {R.OK, id, 0} held with the same hash: the id its first claim named
--          {R.SOURCE_KEY_CONFLICT} held with another hash (nothing changed)

local record_key = KEYS[1]
local request_hash = ARGV[1]
local id = ARGV[2]
local ttl_ms = ARGV[3]

local held = redis.call('GET', record_key)
if held then
  -- The hash is hex, so the first ':' ends it; the id is the rest.
  local sep = string.find(held, ':', 1, true)
  if string.sub(held, 1, sep - 1) ~= request_hash then return { R.SOURCE_KEY_CONFLICT } end
  return { R.OK, string.sub(held, sep + 1), 0 }
end
redis.call('SET', record_key, request_hash .. ':' .. id, 'PX', ttl_ms)
return { R.OK, id, 1 }
