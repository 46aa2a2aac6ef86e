-- recordWebhookDelivery: log one attempt and count it: a success resets the endpoint's
-- consecutive failures, a failure adds one and at the limit disables the endpoint.
-- KEYS[1] endpoints hash   KEYS[2] the endpoint's delivery list
-- ARGV[1] endpoint id   ARGV[2] delivery JSON   ARGV[3] ok (1 | 0)   ARGV[4] failure limit
-- ARGV[5] log length kept
-- Replies: {R.OK, endpoint JSON after}   {R.NONE} no such endpoint (nothing logged)
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return { R.NONE } end
local e = cjson.decode(raw)
if ARGV[3] == '1' then
  e.consecutiveFailures = 0
else
  e.consecutiveFailures = e.consecutiveFailures + 1
end
if not e.disabled and e.consecutiveFailures >= tonumber(ARGV[4]) then
  e.disabled = true
  e.disabledReason = e.consecutiveFailures .. ' consecutive failed deliveries'
end
local out = cjson.encode(e)
redis.call('HSET', KEYS[1], ARGV[1], out)
redis.call('LPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[5]) - 1)
return { R.OK, out }
