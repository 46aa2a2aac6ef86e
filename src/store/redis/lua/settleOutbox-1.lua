-- settleOutbox: the holder of a row's claim settles it: done removes it; retry keeps it for the
-- named endpoints, due later, one attempt more, its lease freed. Checks the token first.
-- KEYS[1] outbox hash
-- ARGV[1] event id   ARGV[2] claim token   ARGV[3] "done" | "retry"   ARGV[4] due ms
-- ARGV[5] JSON [endpoint ids] still owed the event
-- Replies: {R.OK}   {R.NOT_HELD} the row is gone or another claim holds it
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return { R.NOT_HELD } end
local row = cjson.decode(raw)
if row.k ~= ARGV[2] then return { R.NOT_HELD } end
if ARGV[3] == 'done' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return { R.OK }
end
row.a = row.a + 1
row.d = tonumber(ARGV[4])
row.t = ARGV[5]
row.k = ''
row.l = 0
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(row))
return { R.OK }
