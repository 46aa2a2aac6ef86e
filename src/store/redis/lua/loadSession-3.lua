-- loadSession: the committed state of a session. Writes nothing.
-- KEYS[1] head hash   KEYS[2] message list   KEYS[3] metadata hash
-- Replies: {R.OK, rev, turn, in, out, cacheRead, cacheWrite, reasoning, n, msg1..msgn,
--           key1, value1, ...}
--          {R.NONE}   no commit yet (or deleted)
local h = redis.call('HMGET', KEYS[1], 'rev', 'turn', 'in', 'out', 'cr', 'cw', 'rs')
if not h[1] then return { R.NONE } end
local reply = { R.OK }
for i = 1, 7 do reply[#reply + 1] = h[i] or '0' end
local messages = redis.call('LRANGE', KEYS[2], 0, -1)
reply[#reply + 1] = #messages
for _, m in ipairs(messages) do reply[#reply + 1] = m end
for _, v in ipairs(redis.call('HGETALL', KEYS[3])) do reply[#reply + 1] = v end
return reply
