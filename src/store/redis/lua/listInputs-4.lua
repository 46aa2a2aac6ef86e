-- listInputs: pending and claimed inputs in submission order (tombstones left out). Writes nothing.
-- KEYS[1] input hash   KEYS[2] input payload hash   KEYS[3] input index zset (every input)
-- KEYS[4] head hash (the settled-inputs watermark)
-- Replies: {R.OK, inputJson1, payload1, ...}
--- @include "chunked"
--- @include "inputs"

local inputs_key = KEYS[1]
local input_payloads_key = KEYS[2]
local input_index_key = KEYS[3]
local head_key = KEYS[4]

local ids = open_input_ids(head_key, input_index_key)
local metas = hmget_all(inputs_key, ids)
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
local payloads = hmget_all(input_payloads_key, live)
local reply = { R.OK }
for i = 1, #live do
  reply[#reply + 1] = live_metas[i]
  reply[#reply + 1] = payloads[i]
end
return reply
