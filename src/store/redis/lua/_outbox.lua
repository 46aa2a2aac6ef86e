-- Included as "outbox": the webhook outbox (ADR 0021). Reads no KEYS or ARGV (ADR 0035).

-- A webhook outbox row (ADR 0021): e = the event's JSON as given, a = attempts, d = due ms,
-- t = JSON [endpoint ids] or "" for every endpoint that wants it, k = claim token, l = lease
-- expiry ms. Kept as given (never re-encoded), so an empty list stays a list. False when the
-- event's row is there already.
local function write_outbox_row(key, id, event_json, targets, now)
  local row = cjson.encode({ e = event_json, a = 0, d = now, t = targets, k = '', l = 0 })
  return redis.call('HSETNX', key, id, row) == 1
end
