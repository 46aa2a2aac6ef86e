-- appendEvents: append events to the session's stream, numbered by the session's event counter,
-- only while the writer still holds the lease it names (a stale holder's events never appear).
-- KEYS[1] events stream   KEYS[2] event sequence counter   KEYS[3] lease hash
-- ARGV[1] lease token ("" to append without a fence)   ARGV[2] fencing token
-- ARGV[3] max stream length (trimmed exactly: the retained window is what the config says)
-- ARGV[4..] pairs of turn id, event JSON
-- Replies: {R.OK, seq1, seq2, ...}
--          {R.LEASE_EXPIRED}   the named lease is not the live one; nothing appended
--- @include "clock"
--- @include "lease"
--- @include "num"

local events_key = KEYS[1]
local event_seq_key = KEYS[2]
local lease_key = KEYS[3]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local max_len = ARGV[3]

if lease_token ~= '' then
  local lease = live_lease(lease_key, now_ms())
  if not fence_matches(lease, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
end
local reply = { R.OK }
for i = 4, #ARGV, 2 do
  local seq = redis.call('INCR', event_seq_key)
  redis.call('XADD', events_key, 'MAXLEN', max_len, num(seq) .. '-1', 't', ARGV[i], 'e', ARGV[i + 1])
  reply[#reply + 1] = seq
end
return reply
