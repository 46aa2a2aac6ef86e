-- deferActiveInputs: under the live fence, every pending active_turn input of the turn becomes
-- a next_turn input marked deferred. A second call finds none to move.
-- KEYS[1] lease hash   KEYS[2] input hash   KEYS[3] input index zset
-- KEYS[4] head hash (the settled-inputs watermark)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] turn id
-- Replies: {R.OK, id1, id2, ...}   the inputs moved by this call, in sequence order
--          {R.LEASE_EXPIRED}
local lease = live_lease(KEYS[1], now_ms())
if not fence_matches(lease, ARGV[1], ARGV[2]) then return { R.LEASE_EXPIRED } end
local reply = { R.OK }
for _, id in ipairs(defer_turn_inputs(KEYS[4], KEYS[3], KEYS[2], ARGV[3])) do
  reply[#reply + 1] = id
end
return reply
