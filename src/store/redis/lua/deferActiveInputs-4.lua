-- deferActiveInputs: under the live fence, every pending active_turn input of the turn becomes
-- a next_turn input marked deferred. A second call finds none to move.
-- KEYS[1] lease hash   KEYS[2] input hash   KEYS[3] input index zset
-- KEYS[4] head hash (the settled-inputs watermark)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] turn id
-- Replies: {R.OK, id1, id2, ...}   the inputs moved by this call, in sequence order
--          {R.LEASE_EXPIRED}
--- @include "clock"
--- @include "inputs"
--- @include "lease"

local lease_key = KEYS[1]
local inputs_key = KEYS[2]
local input_index_key = KEYS[3]
local head_key = KEYS[4]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local turn_id = ARGV[3]

local lease = live_lease(lease_key, now_ms())
if not fence_matches(lease, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
local reply = { R.OK }
for _, id in ipairs(defer_turn_inputs(head_key, input_index_key, inputs_key, turn_id)) do
  reply[#reply + 1] = id
end
return reply
