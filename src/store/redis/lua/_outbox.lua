-- Included as "outbox": the webhook outbox (ADR 0021). Reads no KEYS or ARGV (ADR 0035).
--- @include "num"

-- A webhook outbox row (ADR 0021): e = the event's JSON as given, a = attempts, d = due ms,
-- t = JSON [endpoint ids] or "" for every endpoint that wants it, k = claim token, l = lease
-- expiry ms. Kept as given (never re-encoded), so an empty list stays a list. False when the
-- event's row is there already.
local function write_outbox_row(key, id, event_json, targets, now)
  local row = cjson.encode({ e = event_json, a = 0, d = now, t = targets, k = '', l = 0 })
  return redis.call('HSETNX', key, id, row) == 1
end

-- The hint's expect (ADR 0021 "The hint"): the outbox becomes due at `due`; a hint due later
-- than the writer's now and earlier than `due` stands (a look that began before it keeps it).
local function expect_outbox(due_key, outbox_id, writer_now, due)
  local current = tonumber(redis.call('ZSCORE', due_key, outbox_id))
  if current and current > tonumber(writer_now) and current < tonumber(due) then return end
  redis.call('ZADD', due_key, due, outbox_id)
end

-- Where the hint index is on the outbox's server (standalone, Sentinel), every write of outbox
-- rows lists the outbox in it in the same step (ADR 0021 "The hint dropped in the settle"), so a
-- settle that empties the outbox may drop it. A writer without a due time of its own makes the
-- outbox due at once (a row due now and unclaimed is owed a look now): moved earlier, never later.
local function hint_outbox_now(due_key, outbox_id, now)
  redis.call('ZADD', due_key, 'LT', now, outbox_id)
end

-- A settle's hint, where every write lists its outbox in its own step (above): dropped when the
-- outbox is empty, else due when its first row is owed a look (due, and its lease free: a retry's
-- due time, a live claim's lease end). Exact, as the rows and the index are read in one step.
local function settle_hint(due_key, outbox_key, outbox_id)
  local rows = redis.call('HVALS', outbox_key)
  if #rows == 0 then
    redis.call('ZREM', due_key, outbox_id)
    return
  end
  local at = nil
  for _, raw in ipairs(rows) do
    local row = cjson.decode(raw)
    local owed = math.max(row.d, row.l)
    if at == nil or owed < at then at = owed end
  end
  redis.call('ZADD', due_key, num(at), outbox_id)
end

-- Takes up to max due rows whose lease is free (never taken, or expired: a dead deliverer's
-- rows come back) under token until until_ms. The claim as claimOutbox replies it after R.OK:
-- {rows in the outbox, lease until ms, n, [event JSON, attempts, due ms, targets]...}.
local function claim_outbox_rows(key, token, now, until_ms, max)
  local all = redis.call('HGETALL', key)
  local reply = { #all / 2, num(until_ms), 0 }
  local taken = 0
  for i = 1, #all, 2 do
    if taken >= max then break end
    local row = cjson.decode(all[i + 1])
    if row.d <= now and row.l <= now then
      row.k = token
      row.l = until_ms
      redis.call('HSET', key, all[i], cjson.encode(row))
      taken = taken + 1
      reply[#reply + 1] = row.e
      reply[#reply + 1] = row.a
      reply[#reply + 1] = num(row.d)
      reply[#reply + 1] = row.t
    end
  end
  reply[3] = taken
  return reply
end
