-- closeToolCalls: under the live fence, close the named calls of a turn (every recorded call
-- when none are named): pending ones become closed, answered ones keep their answer.
-- KEYS[1] lease hash   KEYS[2] the turn's tool call hash (call id -> JSON state)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] retention ms   ARGV[4..] call ids
-- Replies: {R.OK, id1, state1, ...}   states after closing; ids the turn never recorded omitted
--          {R.LEASE_EXPIRED}
local lease = live_lease(KEYS[1], now_ms())
if not fence_matches(lease, ARGV[1], ARGV[2]) then return { R.LEASE_EXPIRED } end
local ids = {}
if #ARGV >= 4 then
  for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
else
  ids = redis.call('HKEYS', KEYS[2])
end
local reply = { R.OK }
for _, id in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[2], id)
  if raw then
    if cjson.decode(raw).s == 'p' then
      raw = '{"s":"c"}'
      redis.call('HSET', KEYS[2], id, raw)
    end
    reply[#reply + 1] = id
    reply[#reply + 1] = raw
  end
end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return reply
