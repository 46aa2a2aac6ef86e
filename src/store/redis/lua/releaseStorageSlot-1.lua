-- releaseStorageSlot: gives a deleted session's, agent's or schedule's slot back (ADR 0029).
-- KEYS[1] the tenant's slot set of that kind
-- ARGV[1] id
-- Replies: {R.OK, 1 when the id held a slot, else 0}
return { R.OK, redis.call('SREM', KEYS[1], ARGV[1]) }
