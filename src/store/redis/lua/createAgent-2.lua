-- createAgent: version 1 of a new agent. An id ever used (a deleted agent's too) stays taken.
-- KEYS[1] agent head hash (latest, deleted)   KEYS[2] agent version hash (version -> JSON)
-- ARGV[1] agent id   ARGV[2] display name   ARGV[3] definition
-- Replies: {R.OK, versionJson}
--          {R.EXISTS}
if redis.call('EXISTS', KEYS[1]) == 1 then return { R.EXISTS } end
local record = cjson.encode({ agentId = ARGV[1], version = 1, displayName = ARGV[2],
  definition = ARGV[3], createdAtMs = now_ms() })
redis.call('HSET', KEYS[2], '1', record)
redis.call('HSET', KEYS[1], 'latest', 1, 'deleted', 0)
return { R.OK, record }
