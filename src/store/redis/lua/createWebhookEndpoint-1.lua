-- createWebhookEndpoint: store a new endpoint of a tenant unless its id is taken.
-- KEYS[1] endpoints hash
-- ARGV[1] endpoint id   ARGV[2] endpoint JSON
-- Replies: {R.OK}   {R.EXISTS} the id is taken (nothing changed)
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then return { R.OK } end
return { R.EXISTS }
