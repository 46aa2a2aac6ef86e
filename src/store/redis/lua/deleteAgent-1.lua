-- deleteAgent: the agent's latest stops being served; its versions stay for pinned sessions.
-- KEYS[1] agent head hash
-- Replies: {R.OK}     deleted now
--          {R.NONE}   no such agent, or deleted before
local deleted = redis.call('HGET', KEYS[1], 'deleted')
if deleted ~= '0' then return { R.NONE } end
redis.call('HSET', KEYS[1], 'deleted', 1)
return { R.OK }
