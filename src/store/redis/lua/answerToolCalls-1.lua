-- answerToolCalls: the first answer for a pending call is stored; an answer for a call that is
-- answered, closed or was never recorded is ignored. In request order, so a duplicate within one
-- request is ignored too.
-- KEYS[1] the turn's tool call hash (call id -> JSON state)
-- ARGV[1] retention ms   ARGV[2..] triples of call id, output, is error ("1" | "0")
-- Replies: {R.OK, id1, "accepted" | "ignored", ...}
--          {R.NONE}   the turn has no records (never waited on a client, or they expired)

local tool_calls_key = KEYS[1]
local retention_ms = ARGV[1]

if redis.call('EXISTS', tool_calls_key) == 0 then return { R.NONE } end
local reply = { R.OK }
for i = 2, #ARGV, 3 do
  local id = ARGV[i]
  local raw = redis.call('HGET', tool_calls_key, id)
  local verdict = 'ignored'
  if raw and cjson.decode(raw).s == 'p' then
    redis.call('HSET', tool_calls_key, id, cjson.encode({ s = 'a', o = ARGV[i + 1], e = ARGV[i + 2] == '1' }))
    verdict = 'accepted'
  end
  reply[#reply + 1] = id
  reply[#reply + 1] = verdict
end
redis.call('PEXPIRE', tool_calls_key, retention_ms)
return reply
