-- readToolCalls: every recorded call of a turn with its state. Writes nothing.
-- KEYS[1] the turn's tool call hash (call id -> JSON state)
-- Replies: {R.OK, id1, state1, ...}   (no pairs when the turn has no records)

local tool_calls_key = KEYS[1]

local reply = { R.OK }
for _, v in ipairs(redis.call('HGETALL', tool_calls_key)) do reply[#reply + 1] = v end
return reply
