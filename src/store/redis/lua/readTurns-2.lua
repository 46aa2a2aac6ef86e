-- readTurns: a page of the session's turn records in creation order (lua/_turns.lua), oldest
-- first (asc) or newest first (desc), after a turn (exclusive) or from the start.
-- KEYS[1] turn records hash   KEYS[2] turn order zset
-- ARGV[1] "asc" | "desc"   ARGV[2] the turn the page starts after ("" for the start)
-- ARGV[3] page size (at least 1)
-- Replies: {R.OK, hasMore (0 | 1), recordJson1, ...}
--          {R.NONE}   ARGV[2] names no record of the session

local records_key = KEYS[1]
local order_key = KEYS[2]
local order = ARGV[1]
local after = ARGV[2]
local page_size = ARGV[3]

local limit = tonumber(page_size)
local from = 0
if after ~= '' then
  local rank
  if order == 'asc' then rank = redis.call('ZRANK', order_key, after)
  else rank = redis.call('ZREVRANK', order_key, after) end
  if not rank then return { R.NONE } end
  from = rank + 1
end
-- One more than the page, to know whether more follow.
local ids
if order == 'asc' then ids = redis.call('ZRANGE', order_key, from, from + limit)
else ids = redis.call('ZREVRANGE', order_key, from, from + limit) end
local more = 0
if #ids > limit then
  more = 1
  ids[#ids] = nil
end
local reply = { R.OK, more }
if #ids == 0 then return reply end
local raws = redis.call('HMGET', records_key, unpack(ids))
for i = 1, #ids do
  if raws[i] then reply[#reply + 1] = raws[i] end
end
return reply
