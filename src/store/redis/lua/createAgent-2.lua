-- createAgent: version 1 of a new agent. An id ever used (a deleted agent's too) stays taken.
-- KEYS[1] agent head hash (latest, deleted)   KEYS[2] agent version hash (version -> JSON)
-- ARGV[1] agent id   ARGV[2] display name   ARGV[3] definition
-- Replies: {R.OK, versionJson}
--          {R.EXISTS}
--- @include "clock"

local agent_key = KEYS[1]
local versions_key = KEYS[2]
local agent_id = ARGV[1]
local display_name = ARGV[2]
local definition = ARGV[3]

if redis.call('EXISTS', agent_key) == 1 then return { R.EXISTS } end
local record = cjson.encode({ agentId = agent_id, version = 1, displayName = display_name,
  definition = definition, createdAtMs = now_ms() })
redis.call('HSET', versions_key, '1', record)
redis.call('HSET', agent_key, 'latest', 1, 'deleted', 0)
return { R.OK, record }
