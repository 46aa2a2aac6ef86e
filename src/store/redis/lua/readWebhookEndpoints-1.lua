-- readWebhookEndpoints: one endpoint of a tenant, or all of them.
-- KEYS[1] endpoints hash
-- ARGV[1] endpoint id, or "" for all
-- Replies: {R.OK, endpoint JSON...}   {R.NONE} no endpoint of that id
if ARGV[1] == '' then
  local reply = { R.OK }
  for _, v in ipairs(redis.call('HVALS', KEYS[1])) do reply[#reply + 1] = v end
  return reply
end
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return { R.NONE } end
return { R.OK, raw }
