-- claimInputs: under the live fence, claim claimable inputs the point admits, in sequence order.
-- Claimable: pending, or claimed by a lower generation. Idle admits next_turn inputs; a
-- checkpoint admits active_turn inputs of its turn whose minBoundary is at or before it.
-- KEYS[1] lease hash   KEYS[2] input hash   KEYS[3] input payload hash   KEYS[4] input index zset
-- KEYS[5] head hash (the settled-inputs watermark)   KEYS[6] parked turn hash
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] "idle" | "checkpoint"
-- ARGV[4] turn id ("" when idle)   ARGV[5] checkpoint ("" when idle)   ARGV[6] max inputs
-- ARGV[7] claim id
-- Replies: {R.OK, inputJson1, payload1, ...}   claimed
--          {R.NONE}                            nothing admitted (idle: also while a turn is parked)
--          {R.LEASE_EXPIRED}
local lease = live_lease(KEYS[1], now_ms())
if not fence_matches(lease, ARGV[1], ARGV[2]) then return { R.LEASE_EXPIRED } end
local gen = tonumber(ARGV[2])
local order = { after_work = 1, before_completion = 2 }
local idle = ARGV[3] == 'idle'
-- A parked turn holds the session: new turns wait for it (its resume takes its own claims).
if idle and redis.call('EXISTS', KEYS[6]) == 1 then return { R.NONE } end
local admit
if idle then
  admit = function(d) return d.kind == 'next_turn' end
else
  admit = function(d)
    return d.kind == 'active_turn' and d.turnId == ARGV[4] and order[d.minBoundary] <= order[ARGV[5]]
  end
end
local taken = take_open_inputs(KEYS[2], KEYS[4], KEYS[5], gen, tonumber(ARGV[6]), admit)
if #taken == 0 then return { R.NONE } end
return append_claimed({ R.OK }, KEYS[2], KEYS[3], taken, 'inputId', gen, ARGV[7])
