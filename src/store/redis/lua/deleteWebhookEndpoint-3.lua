-- deleteWebhookEndpoint: remove an endpoint and its delivery log.
-- KEYS[1] endpoints hash   KEYS[2] the endpoint's delivery list
-- KEYS[3] the tenant's endpoints version (moved by every change)
-- ARGV[1] endpoint id
-- Replies: {R.OK}   {R.NONE} there was no such endpoint

local endpoints_key = KEYS[1]
local deliveries_key = KEYS[2]
local version_key = KEYS[3]
local endpoint_id = ARGV[1]

redis.call('DEL', deliveries_key)
if redis.call('HDEL', endpoints_key, endpoint_id) == 1 then
  redis.call('INCR', version_key)
  return { R.OK }
end
return { R.NONE }
