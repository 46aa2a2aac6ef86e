-- Included as "claims": claiming items (work batches, turn inputs) under a fencing token. Reads
-- no KEYS or ARGV (ADR 0035).

-- A ready item, or one claimed by a generation the fence has superseded.
local function claimable(item, ready_state, gen)
  return item.state == ready_state or (item.state == 'claimed' and item.claimFencingToken < gen)
end

local function mark_claimed(key, id, item, gen, claim_id)
  item.state = 'claimed'
  item.claimFencingToken = gen
  item.claimId = claim_id
  local encoded = cjson.encode(item)
  redis.call('HSET', key, id, encoded)
  return encoded
end

-- Marks the taken items claimed and appends each one's JSON and payload to `reply`.
local function append_claimed(reply, items_key, payloads_key, taken, id_field, gen, claim_id)
  for _, item in ipairs(taken) do
    local id = item[id_field]
    reply[#reply + 1] = mark_claimed(items_key, id, item, gen, claim_id)
    reply[#reply + 1] = redis.call('HGET', payloads_key, id)
  end
  return reply
end
