-- countStorageSlots: a tenant's storage slots held now (ADR 0029); reads only.
-- KEYS[1] sessions slot set   KEYS[2] agents slot set   KEYS[3] schedules slot set
-- ARGV: none
-- Replies: {R.OK, sessions, agents, schedules}
return { R.OK, redis.call('SCARD', KEYS[1]), redis.call('SCARD', KEYS[2]), redis.call('SCARD', KEYS[3]) }
