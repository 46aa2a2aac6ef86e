-- settleOutboxBatch: the holder of a claim settles every row it took from one outbox in one step
-- (ADR 0021, "Batches"): done rows are removed; retried ones are kept for the endpoints still
-- owed, due later, one attempt more, their lease freed. A row is settled only while the token
-- still holds it (checked per row, before its write); others are left as they are.
-- KEYS[1] outbox hash
-- ARGV[1] claim token   ARGV[2] JSON [[event id, "done" | "retry", due ms, [endpoint ids]]...]
-- Replies: {R.OK, rows settled}

local outbox_key = KEYS[1]
local claim_token = ARGV[1]
local settlements_json = ARGV[2]

local settled = 0
for _, s in ipairs(cjson.decode(settlements_json)) do
  local event_id = s[1]
  local raw = redis.call('HGET', outbox_key, event_id)
  if raw then
    local row = cjson.decode(raw)
    if row.k == claim_token then
      if s[2] == 'done' then
        redis.call('HDEL', outbox_key, event_id)
      else
        row.a = row.a + 1
        row.d = tonumber(s[3])
        row.t = cjson.encode(s[4])
        row.k = ''
        row.l = 0
        redis.call('HSET', outbox_key, event_id, cjson.encode(row))
      end
      settled = settled + 1
    end
  end
end
return { R.OK, settled }
