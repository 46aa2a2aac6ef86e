-- listWork: every ready or claimed batch, in enqueue order. Writes nothing.
-- KEYS[1] work hash   KEYS[2] work payload hash   KEYS[3] work index zset (ready and claimed)
-- Replies: {R.OK, batchJson1, payload1, batchJson2, payload2, ...}
--- @include "chunked"

local work_key = KEYS[1]
local work_payloads_key = KEYS[2]
local work_index_key = KEYS[3]

local ids = redis.call('ZRANGE', work_index_key, 0, -1)
local metas = hmget_all(work_key, ids)
local payloads = hmget_all(work_payloads_key, ids)
local reply = { R.OK }
for i = 1, #ids do
  if metas[i] then
    reply[#reply + 1] = metas[i]
    reply[#reply + 1] = payloads[i]
  end
end
return reply
