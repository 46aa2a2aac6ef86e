-- recordToolCalls: under the live fence, record the client tool calls a turn waits on. A call
-- already recorded keeps its state (a re-run of the turn finds earlier answers).
-- KEYS[1] lease hash   KEYS[2] the turn's tool call hash (call id -> JSON state)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] retention ms   ARGV[4..] call ids
-- Replies: {R.OK, state1, state2, ...}   JSON states in call id order
--          {R.LEASE_EXPIRED}
--- @include "clock"
--- @include "lease"

local lease_key = KEYS[1]
local tool_calls_key = KEYS[2]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local retention_ms = ARGV[3]

local lease = live_lease(lease_key, now_ms())
if not fence_matches(lease, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
local reply = { R.OK }
for i = 4, #ARGV do
  redis.call('HSETNX', tool_calls_key, ARGV[i], '{"s":"p"}')
  reply[#reply + 1] = redis.call('HGET', tool_calls_key, ARGV[i])
end
redis.call('PEXPIRE', tool_calls_key, retention_ms)
return reply
