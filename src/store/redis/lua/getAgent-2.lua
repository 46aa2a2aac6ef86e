-- getAgent: one version of an agent, or its latest ("" version) while it is not deleted.
-- KEYS[1] agent head hash   KEYS[2] agent version hash
-- ARGV[1] version ("" for the latest)
-- Replies: {R.OK, versionJson}
--          {R.NONE}
local head = redis.call('HMGET', KEYS[1], 'latest', 'deleted')
if not head[1] then return { R.NONE } end
local version = ARGV[1]
if version == '' then
  if head[2] == '1' then return { R.NONE } end
  version = head[1]
end
local record = redis.call('HGET', KEYS[2], version)
if not record then return { R.NONE } end
return { R.OK, record }
