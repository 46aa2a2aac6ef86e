-- claimOutbox: take up to max due rows whose lease is free (never taken or expired) under one
-- claim token for lease ms; a dead deliverer's rows come back once their lease ran out.
-- KEYS[1] outbox hash
-- ARGV[1] claim token   ARGV[2] lease ms   ARGV[3] max rows
-- Replies: {R.OK, remaining rows, lease until ms, n, [event JSON, attempts, due ms, targets]...}
local now = now_ms()
local until_ms = now + tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local all = redis.call('HGETALL', KEYS[1])
local reply = { R.OK, #all / 2, num(until_ms), 0 }
local taken = 0
for i = 1, #all, 2 do
  if taken >= max then break end
  local row = cjson.decode(all[i + 1])
  if row.d <= now and row.l <= now then
    row.k = ARGV[1]
    row.l = until_ms
    redis.call('HSET', KEYS[1], all[i], cjson.encode(row))
    taken = taken + 1
    reply[#reply + 1] = row.e
    reply[#reply + 1] = row.a
    reply[#reply + 1] = num(row.d)
    reply[#reply + 1] = row.t
  end
end
reply[4] = taken
return reply
