-- updateAgent: the next version, only while the caller's version is still the latest (CAS).
-- KEYS[1] agent head hash   KEYS[2] agent version hash
-- ARGV[1] agent id   ARGV[2] expected version   ARGV[3] display name   ARGV[4] definition
-- Replies: {R.OK, versionJson}
--          {R.NONE}                       no such agent, or deleted
--          {R.VERSION_CONFLICT, latest}
local head = redis.call('HMGET', KEYS[1], 'latest', 'deleted')
if not head[1] or head[2] == '1' then return { R.NONE } end
local latest = tonumber(head[1])
if latest ~= tonumber(ARGV[2]) then return { R.VERSION_CONFLICT, latest } end
local version = latest + 1
local record = cjson.encode({ agentId = ARGV[1], version = version, displayName = ARGV[3],
  definition = ARGV[4], createdAtMs = now_ms() })
redis.call('HSET', KEYS[2], tostring(version), record)
redis.call('HSET', KEYS[1], 'latest', version)
return { R.OK, record }
