-- settleOutbox: the holder of a row's claim settles it: done removes it; retry keeps it for the
-- named endpoints, due later, one attempt more, its lease freed. Checks the token first.
-- KEYS[1] outbox hash
-- ARGV[1] event id   ARGV[2] claim token   ARGV[3] "done" | "retry"   ARGV[4] due ms
-- ARGV[5] JSON [endpoint ids] still owed the event
-- Replies: {R.OK}   {R.NOT_HELD} the row is gone or another claim holds it

local outbox_key = KEYS[1]
local event_id = ARGV[1]
local claim_token = ARGV[2]
local outcome = ARGV[3]
local due_ms = ARGV[4]
local owed_endpoints_json = ARGV[5]

local raw = redis.call('HGET', outbox_key, event_id)
if not raw then return { R.NOT_HELD } end
local row = cjson.decode(raw)
if row.k ~= claim_token then return { R.NOT_HELD } end
if outcome == 'done' then
  redis.call('HDEL', outbox_key, event_id)
  return { R.OK }
end
row.a = row.a + 1
row.d = tonumber(due_ms)
row.t = owed_endpoints_json
row.k = ''
row.l = 0
redis.call('HSET', outbox_key, event_id, cjson.encode(row))
return { R.OK }
