-- readWebhookEndpoints: one endpoint of a tenant, or all of them.
-- KEYS[1] endpoints hash
-- ARGV[1] endpoint id, or "" for all
-- Replies: {R.OK, endpoint JSON...}   {R.NONE} no endpoint of that id

local endpoints_key = KEYS[1]
local endpoint_id = ARGV[1]

if endpoint_id == '' then
  local reply = { R.OK }
  for _, v in ipairs(redis.call('HVALS', endpoints_key)) do reply[#reply + 1] = v end
  return reply
end
local raw = redis.call('HGET', endpoints_key, endpoint_id)
if not raw then return { R.NONE } end
return { R.OK, raw }
