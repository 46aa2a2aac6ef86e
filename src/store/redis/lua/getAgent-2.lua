-- getAgent: one version of an agent, or its latest ("" version) while it is not deleted.
-- KEYS[1] agent head hash   KEYS[2] agent version hash
-- ARGV[1] version ("" for the latest)
-- Replies: {R.OK, versionJson}
--          {R.NONE}

local agent_key = KEYS[1]
local versions_key = KEYS[2]
local version = ARGV[1]

local head = redis.call('HMGET', agent_key, 'latest', 'deleted')
if not head[1] then return { R.NONE } end
if version == '' then
  if head[2] == '1' then return { R.NONE } end
  version = head[1]
end
local record = redis.call('HGET', versions_key, version)
if not record then return { R.NONE } end
return { R.OK, record }
