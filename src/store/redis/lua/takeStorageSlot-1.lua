-- takeStorageSlot: admits one create of a tenant's session, agent or schedule (ADR 0029).
-- KEYS[1] the tenant's slot set of that kind
-- ARGV[1] id   ARGV[2] max slots
-- Replies: {R.OK, 1} a new slot   {R.OK, 0} the id held one already (a retry, counted once)
--          {R.QUOTA_REFUSED} max slots are held (nothing changed)

local slots_key = KEYS[1]
local id = ARGV[1]
local max_slots = ARGV[2]

if redis.call('SISMEMBER', slots_key, id) == 1 then return { R.OK, 0 } end
if redis.call('SCARD', slots_key) >= tonumber(max_slots) then return { R.QUOTA_REFUSED } end
redis.call('SADD', slots_key, id)
return { R.OK, 1 }
