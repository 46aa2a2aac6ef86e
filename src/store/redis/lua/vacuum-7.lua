-- vacuum: remove completed and cancelled batches and inputs, with their payloads and the
-- source keys that still point at them.
-- KEYS[1] work hash    KEYS[2] work payload hash    KEYS[3] work source-key hash
-- KEYS[4] input hash   KEYS[5] input payload hash   KEYS[6] input index zset
-- KEYS[7] input source-key hash
-- Replies: {R.OK, removedBatches, removedInputs}

local work_key = KEYS[1]
local work_payloads_key = KEYS[2]
local work_sources_key = KEYS[3]
local inputs_key = KEYS[4]
local input_payloads_key = KEYS[5]
local input_index_key = KEYS[6]
local input_sources_key = KEYS[7]

local function sweep(items, payloads, sources, index)
  local all = redis.call('HGETALL', items)
  local removed = 0
  for n = 1, #all, 2 do
    local id = all[n]
    local item = cjson.decode(all[n + 1])
    if item.state == 'completed' or item.state == 'cancelled' then
      redis.call('HDEL', items, id)
      redis.call('HDEL', payloads, id)
      if index then redis.call('ZREM', index, id) end
      if item.sourceKey ~= '' then
        local seen = redis.call('HGET', sources, item.sourceKey)
        if seen and string.sub(seen, -(#id + 1)) == ':' .. id then
          redis.call('HDEL', sources, item.sourceKey)
        end
      end
      removed = removed + 1
    end
  end
  return removed
end
local batches = sweep(work_key, work_payloads_key, work_sources_key, nil)
local inputs = sweep(inputs_key, input_payloads_key, input_sources_key, input_index_key)
return { R.OK, batches, inputs }
