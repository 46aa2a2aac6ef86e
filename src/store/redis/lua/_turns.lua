-- Included as "turns": a session's turn records (domain/turn-records.ts, ADR 0037), written in
-- the steps that start, park, resume and commit a turn. Reads no KEYS or ARGV (ADR 0035).
-- t = { records = hash: turn id -> record JSON, order = sorted set: turn id by creation number }

-- TURN_RECORDS_KEPT of domain/turn-records.ts: past it, the oldest record goes.
local TURN_RECORDS_KEPT = 1000

-- The record of `turn_id`, made when it is new (numbered after the newest), with `status`; an
-- `ended` = { usage = {...}, outcome = JSON string } ends it (the outcome is kept as its JSON,
-- `outcomeJson`: cjson would turn an empty list in it into an object). The first start stays.
local function write_turn(t, turn_id, status, now, ended)
  local raw = redis.call('HGET', t.records, turn_id)
  local rec
  if raw then
    rec = cjson.decode(raw)
  else
    rec = { turnId = turn_id, createdAtMs = now }
    local newest = redis.call('ZRANGE', t.order, -1, -1, 'WITHSCORES')
    local n = 1
    if newest[2] then n = tonumber(newest[2]) + 1 end
    redis.call('ZADD', t.order, n, turn_id)
    if redis.call('ZCARD', t.order) > TURN_RECORDS_KEPT then
      local oldest = redis.call('ZPOPMIN', t.order)
      redis.call('HDEL', t.records, oldest[1])
    end
  end
  if rec.startedAtMs == nil then rec.startedAtMs = now end
  rec.status = status
  if ended then
    rec.completedAtMs = now
    rec.usage = ended.usage
    rec.outcomeJson = ended.outcome
  end
  redis.call('HSET', t.records, turn_id, cjson.encode(rec))
end

-- An idle claim that took exactly one input starts the turn named after it: the input carries
-- that name (`tid`, set by its submit from the runtime's derivation, ports/turn-ids.ts).
local function start_claimed_turn(t, taken, now)
  if #taken == 1 and taken[1].tid then write_turn(t, taken[1].tid, 'in_progress', now, nil) end
end
