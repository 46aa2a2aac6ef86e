-- updateAgent: the next version, only while the caller's version is still the latest (CAS).
-- KEYS[1] agent head hash   KEYS[2] agent version hash
-- ARGV[1] agent id   ARGV[2] expected version   ARGV[3] display name   ARGV[4] definition
-- Replies: {R.OK, versionJson}
--          {R.NONE}                       no such agent, or deleted
--          {R.VERSION_CONFLICT, latest}
--- @include "clock"

local agent_key = KEYS[1]
local versions_key = KEYS[2]
local agent_id = ARGV[1]
local expected_version = ARGV[2]
local display_name = ARGV[3]
local definition = ARGV[4]

local head = redis.call('HMGET', agent_key, 'latest', 'deleted')
if not head[1] or head[2] == '1' then return { R.NONE } end
local latest = tonumber(head[1])
if latest ~= tonumber(expected_version) then return { R.VERSION_CONFLICT, latest } end
local version = latest + 1
local record = cjson.encode({ agentId = agent_id, version = version, displayName = display_name,
  definition = definition, createdAtMs = now_ms() })
redis.call('HSET', versions_key, tostring(version), record)
redis.call('HSET', agent_key, 'latest', version)
return { R.OK, record }
