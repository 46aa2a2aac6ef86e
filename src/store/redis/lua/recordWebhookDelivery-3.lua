-- recordWebhookDelivery: log one attempt and count it: a success resets the endpoint's
-- consecutive failures, a failure adds one and at the limit disables the endpoint (which moves
-- the endpoints version: deliverers' cached endpoints must not send to it).
-- KEYS[1] endpoints hash   KEYS[2] the endpoint's delivery list
-- KEYS[3] the tenant's endpoints version (moved by every change)
-- ARGV[1] endpoint id   ARGV[2] delivery JSON   ARGV[3] ok (1 | 0)   ARGV[4] failure limit
-- ARGV[5] log length kept
-- Replies: {R.OK, endpoint JSON after}   {R.NONE} no such endpoint (nothing logged)

local endpoints_key = KEYS[1]
local deliveries_key = KEYS[2]
local version_key = KEYS[3]
local endpoint_id = ARGV[1]
local delivery_json = ARGV[2]
local ok = ARGV[3]
local failure_limit = ARGV[4]
local log_length_kept = ARGV[5]

local raw = redis.call('HGET', endpoints_key, endpoint_id)
if not raw then return { R.NONE } end
local e = cjson.decode(raw)
if ok == '1' then
  e.consecutiveFailures = 0
else
  e.consecutiveFailures = e.consecutiveFailures + 1
end
if not e.disabled and e.consecutiveFailures >= tonumber(failure_limit) then
  e.disabled = true
  e.disabledReason = e.consecutiveFailures .. ' consecutive failed deliveries'
  redis.call('INCR', version_key)
end
local out = cjson.encode(e)
redis.call('HSET', endpoints_key, endpoint_id, out)
redis.call('LPUSH', deliveries_key, delivery_json)
redis.call('LTRIM', deliveries_key, 0, tonumber(log_length_kept) - 1)
return { R.OK, out }
