-- deleteWebhookEndpoint: remove an endpoint and its delivery log.
-- KEYS[1] endpoints hash   KEYS[2] the endpoint's delivery list
-- ARGV[1] endpoint id
-- Replies: {R.OK}   {R.NONE} there was no such endpoint
redis.call('DEL', KEYS[2])
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then return { R.OK } end
return { R.NONE }
