-- cancelWork: ready batches become cancelled tombstones; every id gets a status, in order.
-- KEYS[1] work hash   KEYS[2] work index zset
-- ARGV[1..n] batch ids
-- Replies: {R.OK, id1, status1, ...}  status: cancelled | already_claimed | already_completed |
--          already_cancelled | not_found
local reply = { R.OK }
for i = 1, #ARGV do
  local id = ARGV[i]
  local raw = redis.call('HGET', KEYS[1], id)
  local status
  if not raw then
    status = 'not_found'
  else
    local batch = cjson.decode(raw)
    if batch.state == 'ready' then
      batch.state = 'cancelled'
      redis.call('HSET', KEYS[1], id, cjson.encode(batch))
      redis.call('ZREM', KEYS[2], id)
      status = 'cancelled'
    else
      status = 'already_' .. batch.state
    end
  end
  reply[#reply + 1] = id
  reply[#reply + 1] = status
end
return reply
