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
local reply = { R.OK }
for _, id in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[1], id)
  local status
  if not raw then
    status = 'not_found'
  else
    local input = cjson.decode(raw)
    if input.state == 'pending' then
      input.state = 'cancelled'
      redis.call('HSET', KEYS[1], id, cjson.encode(input))
      status = 'cancelled'
    else
      status = 'already_' .. input.state
    end
  end
  reply[#reply + 1] = id
  reply[#reply + 1] = status
end
return reply
