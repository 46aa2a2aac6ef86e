-- deleteAgent: the agent's latest stops being served; its versions stay for pinned sessions.
-- KEYS[1] agent head hash
-- Replies: {R.OK}     deleted now
--          {R.NONE}   no such agent, or deleted before

local agent_key = KEYS[1]

local deleted = redis.call('HGET', agent_key, 'deleted')
if deleted ~= '0' then return { R.NONE } end
redis.call('HSET', agent_key, 'deleted', 1)
return { R.OK }
