-- listenTurn: a turn's listener starts (signals.ts, not a store operation): mark the turn as the
-- session's running turn for the lease's TTL, and read the signals stored for it before the
-- replica's subscription could hear them.
-- KEYS[1] active turn key   KEYS[2] the turn's cancel key   KEYS[3] the turn's tool results hash
-- ARGV[1] turn id   ARGV[2] marker ttl in ms
-- Replies: {R.OK, 1 when a cancel was requested else 0, stored result JSON...}
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local reply = { R.OK, redis.call('EXISTS', KEYS[2]) }
for _, raw in ipairs(redis.call('HVALS', KEYS[3])) do reply[#reply + 1] = raw end
return reply
