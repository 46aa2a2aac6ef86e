-- Included as "inputs": a session's open turn inputs, their settled watermark, and whether
-- anything waits for the session's holder. Reads no KEYS or ARGV (ADR 0035).
--- @include "chunked"
--- @include "claims"

-- Turn inputs below a session's settled watermark (`ilow` on the head hash, an input sequence)
-- are all completed or cancelled: scans that look for open inputs start above it, so a session's
-- old tombstones cost nothing per turn. Absent (sessions from before) reads 0: scan everything.
local function open_input_ids(head_key, index_key)
  local low = redis.call('HGET', head_key, 'ilow') or '0'
  return redis.call('ZRANGEBYSCORE', index_key, '(' .. low, '+inf')
end

-- Moves the watermark past the settled inputs that follow it, at most `budget` of them per call
-- (later commits continue), so a commit's cost stays bounded.
local function advance_input_watermark(head_key, index_key, inputs_key, budget)
  local low = redis.call('HGET', head_key, 'ilow') or '0'
  local moved = false
  local entries = redis.call('ZRANGEBYSCORE', index_key, '(' .. low, '+inf', 'WITHSCORES', 'LIMIT', 0, budget)
  for i = 1, #entries, 2 do
    local raw = redis.call('HGET', inputs_key, entries[i])
    if raw then
      local state = cjson.decode(raw).state
      if state ~= 'completed' and state ~= 'cancelled' then break end
    end
    low = entries[i + 1]
    moved = true
  end
  if moved then redis.call('HSET', head_key, 'ilow', low) end
end

-- Whether anything waits for a session's holder: a parked turn, queued work (ready or claimed),
-- an open input to run next or one claimed (its claimant may be gone). A holder releases its
-- lease only when nothing does (releaseIfIdle, and the commit that announces a turn).
local function waits_for_holder(head_key, inputs_key, index_key, work_index_key, parked_key)
  if redis.call('EXISTS', parked_key) == 1 or redis.call('ZCARD', work_index_key) > 0 then
    return true
  end
  local ids = open_input_ids(head_key, index_key)
  local metas = hmget_all(inputs_key, ids)
  for i = 1, #ids do
    if metas[i] then
      local input = cjson.decode(metas[i])
      if input.state == 'claimed' or (input.state == 'pending' and input.delivery.kind == 'next_turn') then
        return true
      end
    end
  end
  return false
end

-- A turn's steered inputs still pending become next-turn input, marked deferred; returns the
-- ids moved, in sequence order.
local function defer_turn_inputs(head_key, index_key, inputs_key, turn_id)
  local ids = open_input_ids(head_key, index_key)
  local metas = hmget_all(inputs_key, ids)
  local moved = {}
  for i = 1, #ids do
    if metas[i] then
      local input = cjson.decode(metas[i])
      if input.state == 'pending' and input.delivery.kind == 'active_turn'
        and input.delivery.turnId == turn_id then
        input.delivery = { kind = 'next_turn' }
        input.deferred = true
        redis.call('HSET', inputs_key, ids[i], cjson.encode(input))
        moved[#moved + 1] = ids[i]
      end
    end
  end
  return moved
end

-- The open inputs that `admit(delivery)` takes, claimable under generation `gen`, in sequence
-- order, at most `max` (claimInputs, startTurn).
local function take_open_inputs(items_key, index_key, head_key, gen, max, admit)
  local ids = open_input_ids(head_key, index_key)
  local metas = hmget_all(items_key, ids)
  local taken = {}
  for i = 1, #ids do
    if #taken >= max then break end
    if metas[i] then
      local input = cjson.decode(metas[i])
      if admit(input.delivery) and claimable(input, 'pending', gen) then taken[#taken + 1] = input end
    end
  end
  return taken
end
