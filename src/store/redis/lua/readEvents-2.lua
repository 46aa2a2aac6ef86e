-- readEvents: a page of the session's log after a sequence number, and the lowest sequence
-- number the log still holds, in one step (the event log's read; not a store operation).
-- KEYS[1] events stream   KEYS[2] event sequence counter
-- ARGV[1] read after this sequence number   ARGV[2] page size
-- Replies: {R.OK, first retained seq, then per entry: id, turn id, event JSON}
--          the first retained seq is the last seq + 1 when the log holds nothing

local events_key = KEYS[1]
local event_seq_key = KEYS[2]
local after_seq = ARGV[1]
local page_size = ARGV[2]

local page = redis.call('XRANGE', events_key, '(' .. after_seq .. '-1', '+', 'COUNT', page_size)
local oldest = redis.call('XRANGE', events_key, '-', '+', 'COUNT', 1)[1]
local retained
if oldest then
  retained = tonumber(string.match(oldest[1], '^(%d+)'))
else
  retained = tonumber(redis.call('GET', event_seq_key) or '0') + 1
end
local reply = { R.OK, retained }
for _, entry in ipairs(page) do
  local turn, json = '', 'null'
  local fields = entry[2]
  for i = 1, #fields - 1, 2 do
    if fields[i] == 't' then turn = fields[i + 1] elseif fields[i] == 'e' then json = fields[i + 1] end
  end
  reply[#reply + 1] = entry[1]
  reply[#reply + 1] = turn
  reply[#reply + 1] = json
end
return reply
