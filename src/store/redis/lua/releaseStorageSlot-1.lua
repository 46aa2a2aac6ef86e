-- releaseStorageSlot: gives a deleted session's, agent's or schedule's slot back (ADR 0029).
-- KEYS[1] the tenant's slot set of that kind
-- ARGV[1] id
-- Replies: {R.OK, 1 when the id held a slot, else 0}

local slots_key = KEYS[1]
local id = ARGV[1]

return { R.OK, redis.call('SREM', slots_key, id) }
