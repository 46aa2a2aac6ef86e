-- recordToolCalls: under the live fence, record the client tool calls a turn waits on. A call
-- already recorded keeps its state (a re-run of the turn finds earlier answers).
-- KEYS[1] lease hash   KEYS[2] the turn's tool call hash (call id -> JSON state)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] retention ms   ARGV[4..] call ids
-- Replies: {R.OK, state1, state2, ...}   JSON states in call id order
--          {R.LEASE_EXPIRED}
local lease = live_lease(KEYS[1], now_ms())
if not fence_matches(lease, ARGV[1], ARGV[2]) then return { R.LEASE_EXPIRED } end
local reply = { R.OK }
for i = 4, #ARGV do
  redis.call('HSETNX', KEYS[2], ARGV[i], '{"s":"p"}')
  reply[#reply + 1] = redis.call('HGET', KEYS[2], ARGV[i])
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return reply
