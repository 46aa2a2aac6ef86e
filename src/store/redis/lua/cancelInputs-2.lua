-- cancelInputs: pending inputs become cancelled tombstones, in one step. By ids, or the suffix
-- from an anchor: the anchor and every later input by sequence, tombstones included.
-- KEYS[1] input hash   KEYS[2] input index zset (every input)
-- ARGV[1] "ids" | "suffix"   ARGV[2..] input ids (for suffix: the anchor only)
-- Replies: {R.OK, id1, status1, ...}  status: cancelled | already_claimed | already_completed |
--          already_cancelled | not_found
local ids = {}
if ARGV[1] == 'suffix' then
  local score = redis.call('ZSCORE', KEYS[2], ARGV[2])
  if score and redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
    ids = redis.call('ZRANGEBYSCORE', KEYS[2], score, '+inf')
  else
    ids = { ARGV[2] }
  end
else
  for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
end
-- Tombstones stay in the index: a later suffix cancel orders by them.
return cancel_items(KEYS[1], ids, 'pending', nil)
