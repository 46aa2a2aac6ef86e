-- listWebhookDeliveries: a page of an endpoint's delivery log, newest first.
-- KEYS[1] the endpoint's delivery list
-- ARGV[1] offset   ARGV[2] limit
-- Replies: {R.OK, total length, delivery JSON...}

local deliveries_key = KEYS[1]
local offset = ARGV[1]
local limit = ARGV[2]

local from = tonumber(offset)
local page = redis.call('LRANGE', deliveries_key, from, from + tonumber(limit) - 1)
local reply = { R.OK, redis.call('LLEN', deliveries_key) }
for _, v in ipairs(page) do reply[#reply + 1] = v end
return reply
