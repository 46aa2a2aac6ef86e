-- claimInputs: under the live fence, claim claimable inputs the point admits, in sequence order.
-- Claimable: pending, or claimed by a lower generation. Idle admits next_turn inputs; a
-- checkpoint admits active_turn inputs of its turn whose minBoundary is at or before it.
-- KEYS[1] lease hash   KEYS[2] input hash   KEYS[3] input payload hash   KEYS[4] input index zset
-- KEYS[5] head hash (the settled-inputs watermark)   KEYS[6] parked turn hash
-- KEYS[7] turn records hash   KEYS[8] turn order zset (lua/_turns.lua: an idle claim of one
--         input records its turn in_progress)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] "idle" | "checkpoint"
-- ARGV[4] turn id ("" when idle)   ARGV[5] checkpoint ("" when idle)   ARGV[6] max inputs
-- ARGV[7] claim id
-- Replies: {R.OK, inputJson1, payload1, ...}   claimed
--          {R.NONE}                            nothing admitted (idle: also while a turn is parked)
--          {R.LEASE_EXPIRED}
--- @include "claims"
--- @include "clock"
--- @include "inputs"
--- @include "lease"
--- @include "turns"

local lease_key = KEYS[1]
local inputs_key = KEYS[2]
local input_payloads_key = KEYS[3]
local input_index_key = KEYS[4]
local head_key = KEYS[5]
local parked_turn_key = KEYS[6]
local turn_records_key = KEYS[7]
local turn_order_key = KEYS[8]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local boundary = ARGV[3]
local turn_id = ARGV[4]
local checkpoint = ARGV[5]
local max_inputs = ARGV[6]
local claim_id = ARGV[7]
local turns = { records = turn_records_key, order = turn_order_key }

local now = now_ms()
local lease = live_lease(lease_key, now)
if not fence_matches(lease, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
local gen = tonumber(fencing_token)
local order = { after_work = 1, before_completion = 2 }
local idle = boundary == 'idle'
-- A parked turn holds the session: new turns wait for it (its resume takes its own claims).
if idle and redis.call('EXISTS', parked_turn_key) == 1 then return { R.NONE } end
local admit
if idle then
  admit = function(d) return d.kind == 'next_turn' end
else
  admit = function(d)
    return d.kind == 'active_turn' and d.turnId == turn_id and order[d.minBoundary] <= order[checkpoint]
  end
end
local taken = take_open_inputs(inputs_key, input_index_key, head_key, gen, tonumber(max_inputs), admit)
if #taken == 0 then return { R.NONE } end
if idle then start_claimed_turn(turns, taken, now) end
return append_claimed({ R.OK }, inputs_key, input_payloads_key, taken, 'inputId', gen, claim_id)
