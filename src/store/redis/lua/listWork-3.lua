-- listWork: every ready or claimed batch, in enqueue order. Writes nothing.
-- KEYS[1] work hash   KEYS[2] work payload hash   KEYS[3] work index zset (ready and claimed)
-- Replies: {R.OK, batchJson1, payload1, batchJson2, payload2, ...}
local ids = redis.call('ZRANGE', KEYS[3], 0, -1)
local metas = hmget_all(KEYS[1], ids)
local payloads = hmget_all(KEYS[2], ids)
local reply = { R.OK }
for i = 1, #ids do
  if metas[i] then
    reply[#reply + 1] = metas[i]
    reply[#reply + 1] = payloads[i]
  end
end
return reply
