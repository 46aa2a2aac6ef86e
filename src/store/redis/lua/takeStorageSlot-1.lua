-- takeStorageSlot: admits one create of a tenant's session, agent or schedule (ADR 0029).
-- KEYS[1] the tenant's slot set of that kind
-- ARGV[1] id   ARGV[2] max slots
-- Replies: {R.OK, 1} a new slot   {R.OK, 0} the id held one already (a retry, counted once)
--          {R.QUOTA_REFUSED} max slots are held (nothing changed)
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return { R.OK, 0 } end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return { R.QUOTA_REFUSED } end
redis.call('SADD', KEYS[1], ARGV[1])
return { R.OK, 1 }
