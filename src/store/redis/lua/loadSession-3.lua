-- loadSession: the committed state of a session, with the whole transcript or, when the caller's
-- mark names this transcript's epoch, only the messages after the mark. Writes nothing.
-- KEYS[1] head hash   KEYS[2] message list   KEYS[3] metadata hash
-- ARGV[1] mark epoch ("" for no mark)   ARGV[2] mark message count
-- Replies: {R.OK, rev, turn, in, out, cacheRead, cacheWrite, reasoning, epoch, from, cost, n,
--           msg1..msgn, key1, value1, ...}   messages from transcript index `from` on
--          {R.NONE}   no commit yet (or deleted)
local h = redis.call('HMGET', KEYS[1], 'rev', 'turn', 'in', 'out', 'cr', 'cw', 'rs', 'ep', 'cost')
if not h[1] then return { R.NONE } end
local reply = { R.OK }
for i = 1, 7 do reply[#reply + 1] = h[i] or '0' end
local epoch = h[8] or ''
local from = 0
local marked = tonumber(ARGV[2])
if epoch ~= '' and epoch == ARGV[1] and marked <= redis.call('LLEN', KEYS[2]) then from = marked end
reply[#reply + 1] = epoch
reply[#reply + 1] = from
reply[#reply + 1] = h[9] or '0'
local messages = redis.call('LRANGE', KEYS[2], from, -1)
reply[#reply + 1] = #messages
for _, m in ipairs(messages) do reply[#reply + 1] = m end
for _, v in ipairs(redis.call('HGETALL', KEYS[3])) do reply[#reply + 1] = v end
return reply
