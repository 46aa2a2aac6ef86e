-- Included as "tool-calls": a turn's client tool calls. Reads no KEYS or ARGV (ADR 0035).

-- Closes a turn's client tool calls (every recorded one when ids is empty): pending ones become
-- closed, answered ones keep their answer, and the hash is kept `retention` ms from now. Returns
-- {id, state JSON, ...} for the calls it holds (closeToolCalls, and the commit that announces
-- the turn: answers after the turn's end are for a turn that ended).
local function close_tool_calls(key, ids, retention)
  if #ids == 0 then ids = redis.call('HKEYS', key) end
  local states = {}
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', key, id)
    if raw then
      if cjson.decode(raw).s == 'p' then
        raw = '{"s":"c"}'
        redis.call('HSET', key, id, raw)
      end
      states[#states + 1] = id
      states[#states + 1] = raw
    end
  end
  if redis.call('EXISTS', key) == 1 then redis.call('PEXPIRE', key, retention) end
  return states
end
