-- Included as "items": stored items with a source key (work batches, turn inputs), stored once,
-- deduplicated and cancelled. Reads no KEYS or ARGV (ADR 0035).
--- @include "epoch"

-- Items with a source key (work batches, turn inputs): a source key seen before answers with the
-- item it stored (same content hash) or a conflict (other content). nil when the key is new.
local function source_key_reply(items_key, source_keys_key, source_key, content_hash)
  if source_key == '' then return nil end
  local seen = redis.call('HGET', source_keys_key, source_key)
  if not seen then return nil end
  local sep = string.find(seen, ':', 1, true)
  if string.sub(seen, 1, sep - 1) ~= content_hash then return { R.SOURCE_KEY_CONFLICT } end
  local existing = redis.call('HGET', items_key, string.sub(seen, sep + 1))
  if existing then return { R.DEDUPLICATED, existing } end
  return nil
end

-- Stores a new item, its payload, its index entry and its source key. A session without a
-- commit is created by its first stored item (ADR 0003). Returns 1 when it created the session.
local function store_new_item(keys, id, seq, item, payload, source_key, content_hash)
  redis.call('HSET', keys.items, id, cjson.encode(item))
  redis.call('HSET', keys.payloads, id, payload)
  redis.call('ZADD', keys.index, seq, id)
  if source_key ~= '' then redis.call('HSET', keys.source_keys, source_key, content_hash .. ':' .. id) end
  local created = redis.call('HSETNX', keys.head, 'rev', 1)
  if created == 1 then ensure_epoch(keys.head) end
  return created
end

-- Cancels items still in their open state; every id gets a status, in order:
-- cancelled | already_<state> | not_found. `on_cancel(id)` runs for each item cancelled now.
local function cancel_items(items_key, ids, open_state, on_cancel)
  local reply = { R.OK }
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', items_key, id)
    local status
    if not raw then
      status = 'not_found'
    else
      local item = cjson.decode(raw)
      if item.state == open_state then
        item.state = 'cancelled'
        redis.call('HSET', items_key, id, cjson.encode(item))
        if on_cancel then on_cancel(id) end
        status = 'cancelled'
      else
        status = 'already_' .. item.state
      end
    end
    reply[#reply + 1] = id
    reply[#reply + 1] = status
  end
  return reply
end
