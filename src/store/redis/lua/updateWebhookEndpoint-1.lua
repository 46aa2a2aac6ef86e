-- updateWebhookEndpoint: change an endpoint's url, event types, secret or disabled flag.
-- Re-enabling clears the failure count and the reason.
-- KEYS[1] endpoints hash
-- ARGV[1] endpoint id   ARGV[2] JSON patch {url?, eventTypes?, secret?, disabled?}
-- Replies: {R.OK, endpoint JSON after}   {R.NONE} no such endpoint
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return { R.NONE } end
local e = cjson.decode(raw)
local p = cjson.decode(ARGV[2])
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
redis.call('HSET', KEYS[1], ARGV[1], out)
return { R.OK, out }
