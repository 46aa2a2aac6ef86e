-- cancelWork: ready batches become cancelled tombstones; every id gets a status, in order.
-- KEYS[1] work hash   KEYS[2] work index zset
-- ARGV[1..n] batch ids
-- Replies: {R.OK, id1, status1, ...}  status: cancelled | already_claimed | already_completed |
--          already_cancelled | not_found
--- @include "items"

local work_key = KEYS[1]
local work_index_key = KEYS[2]

local ids = {}
for i = 1, #ARGV do ids[#ids + 1] = ARGV[i] end
return cancel_items(work_key, ids, 'ready', function(id) redis.call('ZREM', work_index_key, id) end)
