-- Included as "epoch": a session's transcript epoch (SessionSnapshot.transcriptEpoch). Reads no
-- KEYS or ARGV (ADR 0035).
--- @include "num"

-- Every incarnation of a session gets a transcript epoch when its head is created (see
-- SessionSnapshot.transcriptEpoch): the Redis clock in microseconds, distinct for a session
-- deleted and created again. Readers that cache a transcript compare it.
local function ensure_epoch(head_key)
  local t = redis.call('TIME')
  redis.call('HSETNX', head_key, 'ep', t[1] .. string.format('%06d', tonumber(t[2])))
end

-- A transcript epoch no earlier one of the session had (a rewind rewrites the transcript).
local function new_epoch(head_key, rev)
  local t = redis.call('TIME')
  redis.call('HSET', head_key, 'ep', t[1] .. string.format('%06d', tonumber(t[2])) .. '.' .. num(rev))
end
