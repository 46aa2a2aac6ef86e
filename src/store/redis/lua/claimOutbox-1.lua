-- claimOutbox: take up to max due rows whose lease is free (never taken or expired) under one
-- claim token for lease ms; a dead deliverer's rows come back once their lease ran out.
-- KEYS[1] outbox hash
-- ARGV[1] claim token   ARGV[2] lease ms   ARGV[3] max rows
-- Replies: {R.OK, remaining rows, lease until ms, n, [event JSON, attempts, due ms, targets]...}
--- @include "clock"
--- @include "num"

local outbox_key = KEYS[1]
local claim_token = ARGV[1]
local lease_ms = ARGV[2]
local max_rows = ARGV[3]

local now = now_ms()
local until_ms = now + tonumber(lease_ms)
local max = tonumber(max_rows)
local all = redis.call('HGETALL', outbox_key)
local reply = { R.OK, #all / 2, num(until_ms), 0 }
local taken = 0
for i = 1, #all, 2 do
  if taken >= max then break end
  local row = cjson.decode(all[i + 1])
  if row.d <= now and row.l <= now then
    row.k = claim_token
    row.l = until_ms
    redis.call('HSET', outbox_key, all[i], cjson.encode(row))
    taken = taken + 1
    reply[#reply + 1] = row.e
    reply[#reply + 1] = row.a
    reply[#reply + 1] = num(row.d)
    reply[#reply + 1] = row.t
  end
end
reply[4] = taken
return reply
