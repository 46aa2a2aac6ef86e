-- Included as "schedule": schedule hashes and the due index (ADR 0020). Reads no KEYS or ARGV
-- (ADR 0035).
--- @include "num"

-- Schedule hash fields (ADR 0020): tenant, id, spec (the client's spec, opaque here), rev
-- (bumped by each update), paused (0/1), reason, next (next regular occurrence, '' for none),
-- last (occurrence of the last fire), runnow (a run-now request's instant, '' for none), and the
-- claim: ctok (token), cat (claimed occurrence), cexp (claim expiry), crn (1: a run-now claim).
local SCHED_FIELDS = { 'tenant', 'id', 'spec', 'rev', 'paused', 'reason', 'next', 'last', 'runnow' }

local function sched_record(key)
  return redis.call('HMGET', key, unpack(SCHED_FIELDS))
end

local function sched_live_claim(key, now)
  local c = redis.call('HMGET', key, 'ctok', 'cat', 'cexp', 'crn')
  if c[1] and c[1] ~= '' and tonumber(c[3]) > now then
    return { tok = c[1], at = c[2], exp = tonumber(c[3]), rn = c[4] }
  end
  return nil
end

-- Puts the schedule in the due index at the instant it is next looked at: a live claim's expiry,
-- else its earliest occurrence unless paused; removes it when there is none.
local function sched_reindex(key, due_key, member, now)
  local claim = sched_live_claim(key, now)
  if claim then
    redis.call('ZADD', due_key, num(claim.exp), member)
    return
  end
  local s = redis.call('HMGET', key, 'paused', 'next', 'runnow')
  local at = nil
  if s[1] ~= '1' then
    if s[2] and s[2] ~= '' then at = tonumber(s[2]) end
    if s[3] and s[3] ~= '' and (at == nil or tonumber(s[3]) < at) then at = tonumber(s[3]) end
  end
  if at then redis.call('ZADD', due_key, num(at), member) else redis.call('ZREM', due_key, member) end
end
