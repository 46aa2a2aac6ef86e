-- updateWebhookEndpoint: change an endpoint's url, event types, secret or disabled flag.
-- Re-enabling clears the failure count and the reason.
-- KEYS[1] endpoints hash   KEYS[2] the tenant's endpoints version (moved by every change)
-- ARGV[1] endpoint id   ARGV[2] JSON patch {url?, eventTypes?, secret?, disabled?}
-- Replies: {R.OK, endpoint JSON after}   {R.NONE} no such endpoint

local endpoints_key = KEYS[1]
local version_key = KEYS[2]
local endpoint_id = ARGV[1]
local patch_json = ARGV[2]

local raw = redis.call('HGET', endpoints_key, endpoint_id)
if not raw then return { R.NONE } end
local e = cjson.decode(raw)
local p = cjson.decode(patch_json)
if p.url then e.url = p.url end
if p.eventTypes then e.eventTypes = p.eventTypes end
if p.secret then e.secret = p.secret end
if p.disabled == false then
  e.disabled = false
  e.disabledReason = ''
  e.consecutiveFailures = 0
elseif p.disabled == true and not e.disabled then
  e.disabled = true
  e.disabledReason = 'disabled by request'
end
local out = cjson.encode(e)
redis.call('HSET', endpoints_key, endpoint_id, out)
redis.call('INCR', version_key)
return { R.OK, out }
