-- createWebhookEndpoint: store a new endpoint of a tenant unless its id is taken, or the tenant
-- holds its limit of endpoints already (ADR 0029: checked in this step, before the write).
-- KEYS[1] endpoints hash   KEYS[2] the tenant's endpoints version (moved by every change)
-- ARGV[1] endpoint id   ARGV[2] endpoint JSON   ARGV[3] max endpoints (0: no limit)
-- Replies: {R.OK}   {R.EXISTS} the id is taken (nothing changed)
--          {R.QUOTA_REFUSED} the tenant holds max endpoints (nothing changed)

local endpoints_key = KEYS[1]
local version_key = KEYS[2]
local endpoint_id = ARGV[1]
local endpoint_json = ARGV[2]
local max_endpoints = ARGV[3]

if redis.call('HEXISTS', endpoints_key, endpoint_id) == 1 then return { R.EXISTS } end
local max = tonumber(max_endpoints or '0')
if max > 0 and redis.call('HLEN', endpoints_key) >= max then return { R.QUOTA_REFUSED } end
redis.call('HSET', endpoints_key, endpoint_id, endpoint_json)
redis.call('INCR', version_key)
return { R.OK }
