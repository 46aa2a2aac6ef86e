-- Included as "session": a session's committed state as loadSession replies it. Reads no KEYS
-- or ARGV (ADR 0035).

-- loadSession's reply: the committed state, with the messages after the caller's mark when it
-- names this transcript's epoch (loadSession, startTurn).
-- {R.OK, rev, turn, in, out, cacheRead, cacheWrite, reasoning, epoch, from, cost, n, msg1..msgn,
--  key1, value1, ...}, or {R.NONE} before the first commit
local function session_state(head_key, messages_key, metadata_key, mark_epoch, mark_count)
  local h = redis.call('HMGET', head_key, 'rev', 'turn', 'in', 'out', 'cr', 'cw', 'rs', 'ep', 'cost')
  if not h[1] then return { R.NONE } end
  local reply = { R.OK }
  for i = 1, 7 do reply[#reply + 1] = h[i] or '0' end
  local epoch = h[8] or ''
  local from = 0
  if epoch ~= '' and epoch == mark_epoch and mark_count <= redis.call('LLEN', messages_key) then
    from = mark_count
  end
  reply[#reply + 1] = epoch
  reply[#reply + 1] = from
  reply[#reply + 1] = h[9] or '0'
  local messages = redis.call('LRANGE', messages_key, from, -1)
  reply[#reply + 1] = #messages
  for _, m in ipairs(messages) do reply[#reply + 1] = m end
  for _, v in ipairs(redis.call('HGETALL', metadata_key)) do reply[#reply + 1] = v end
  return reply
end
