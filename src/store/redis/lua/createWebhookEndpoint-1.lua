-- createWebhookEndpoint: store a new endpoint of a tenant unless its id is taken, or the tenant
-- holds its limit of endpoints already (ADR 0029: checked in this step, before the write).
-- KEYS[1] endpoints hash
-- ARGV[1] endpoint id   ARGV[2] endpoint JSON   ARGV[3] max endpoints (0: no limit)
-- Replies: {R.OK}   {R.EXISTS} the id is taken (nothing changed)
--          {R.QUOTA_REFUSED} the tenant holds max endpoints (nothing changed)
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return { R.EXISTS } end
local max = tonumber(ARGV[3] or '0')
if max > 0 and redis.call('HLEN', KEYS[1]) >= max then return { R.QUOTA_REFUSED } end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return { R.OK }
