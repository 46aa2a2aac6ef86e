-- listenTurn: a turn's listener starts (signals.ts, not a store operation): mark the turn as the
-- session's running turn for the lease's TTL, and read the signals stored for it before the
-- replica's subscription could hear them.
-- KEYS[1] active turn key   KEYS[2] the turn's cancel key   KEYS[3] the turn's tool results hash
-- ARGV[1] turn id   ARGV[2] marker ttl in ms
-- Replies: {R.OK, 1 when a cancel was requested else 0, stored result JSON...}

local active_turn_key = KEYS[1]
local cancel_key = KEYS[2]
local answers_key = KEYS[3]
local turn_id = ARGV[1]
local marker_ttl_ms = ARGV[2]

redis.call('SET', active_turn_key, turn_id, 'PX', marker_ttl_ms)
local reply = { R.OK, redis.call('EXISTS', cancel_key) }
for _, raw in ipairs(redis.call('HVALS', answers_key)) do reply[#reply + 1] = raw end
return reply
