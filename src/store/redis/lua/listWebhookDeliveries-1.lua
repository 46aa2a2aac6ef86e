-- listWebhookDeliveries: a page of an endpoint's delivery log, newest first.
-- KEYS[1] the endpoint's delivery list
-- ARGV[1] offset   ARGV[2] limit
-- Replies: {R.OK, total length, delivery JSON...}
local from = tonumber(ARGV[1])
local page = redis.call('LRANGE', KEYS[1], from, from + tonumber(ARGV[2]) - 1)
local reply = { R.OK, redis.call('LLEN', KEYS[1]) }
for _, v in ipairs(page) do reply[#reply + 1] = v end
return reply
