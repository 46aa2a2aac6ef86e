-- cancelInputs: pending inputs become cancelled tombstones, in one step. By ids, or the suffix
-- from an anchor: the anchor and every later input by sequence, tombstones included.
-- KEYS[1] input hash   KEYS[2] input index zset (every input)
-- ARGV[1] "ids" | "suffix"   ARGV[2..] input ids (for suffix: the anchor only)
-- Replies: {R.OK, id1, status1, ...}  status: cancelled | already_claimed | already_completed |
--          already_cancelled | not_found
--- @include "items"

local inputs_key = KEYS[1]
local input_index_key = KEYS[2]
local mode = ARGV[1]
local anchor_id = ARGV[2]

local ids = {}
if mode == 'suffix' then
  local score = redis.call('ZSCORE', input_index_key, anchor_id)
  if score and redis.call('HEXISTS', inputs_key, anchor_id) == 1 then
    ids = redis.call('ZRANGEBYSCORE', input_index_key, score, '+inf')
  else
    ids = { anchor_id }
  end
else
  for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
end
-- Tombstones stay in the index: a later suffix cancel orders by them.
return cancel_items(inputs_key, ids, 'pending', nil)
