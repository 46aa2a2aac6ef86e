-- countStorageSlots: a tenant's storage slots held now (ADR 0029); reads only.
-- KEYS[1] sessions slot set   KEYS[2] agents slot set   KEYS[3] schedules slot set
-- ARGV: none
-- Replies: {R.OK, sessions, agents, schedules}

local sessions_slot_key = KEYS[1]
local agents_slot_key = KEYS[2]
local schedules_slot_key = KEYS[3]

return { R.OK, redis.call('SCARD', sessions_slot_key), redis.call('SCARD', agents_slot_key), redis.call('SCARD', schedules_slot_key) }
