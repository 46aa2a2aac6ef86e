-- listInputs: pending and claimed inputs in submission order (tombstones left out). Writes nothing.
-- KEYS[1] input hash   KEYS[2] input payload hash   KEYS[3] input index zset (every input)
-- KEYS[4] head hash (the settled-inputs watermark)
-- Replies: {R.OK, inputJson1, payload1, ...}
local ids = open_input_ids(KEYS[4], KEYS[3])
local metas = hmget_all(KEYS[1], ids)
local live = {}
local live_metas = {}
for i = 1, #ids do
  if metas[i] then
    local state = cjson.decode(metas[i]).state
    if state == 'pending' or state == 'claimed' then
      live[#live + 1] = ids[i]
      live_metas[#live_metas + 1] = metas[i]
    end
  end
end
local payloads = hmget_all(KEYS[2], live)
local reply = { R.OK }
for i = 1, #live do
  reply[#reply + 1] = live_metas[i]
  reply[#reply + 1] = payloads[i]
end
return reply
