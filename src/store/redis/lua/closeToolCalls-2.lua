-- closeToolCalls: under the live fence, close the named calls of a turn (every recorded call
-- when none are named): pending ones become closed, answered ones keep their answer.
-- KEYS[1] lease hash   KEYS[2] the turn's tool call hash (call id -> JSON state)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] retention ms   ARGV[4..] call ids
-- Replies: {R.OK, id1, state1, ...}   states after closing; ids the turn never recorded omitted
--          {R.LEASE_EXPIRED}
local lease = live_lease(KEYS[1], now_ms())
if not fence_matches(lease, ARGV[1], ARGV[2]) then return { R.LEASE_EXPIRED } end
local ids = {}
for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
local reply = { R.OK }
for _, v in ipairs(close_tool_calls(KEYS[2], ids, ARGV[3])) do reply[#reply + 1] = v end
return reply
