-- closeToolCalls: under the live fence, close the named calls of a turn (every recorded call
-- when none are named): pending ones become closed, answered ones keep their answer.
-- KEYS[1] lease hash   KEYS[2] the turn's tool call hash (call id -> JSON state)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] retention ms   ARGV[4..] call ids
-- Replies: {R.OK, id1, state1, ...}   states after closing; ids the turn never recorded omitted
--          {R.LEASE_EXPIRED}
--- @include "clock"
--- @include "lease"
--- @include "tool-calls"

local lease_key = KEYS[1]
local tool_calls_key = KEYS[2]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local retention_ms = ARGV[3]

local lease = live_lease(lease_key, now_ms())
if not fence_matches(lease, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
local ids = {}
for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
local reply = { R.OK }
for _, v in ipairs(close_tool_calls(tool_calls_key, ids, retention_ms)) do reply[#reply + 1] = v end
return reply
