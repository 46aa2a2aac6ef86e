-- readSessionSummary: what a session list shows of one session (committed counters, usage and
-- metadata, the live lease judged by the Redis clock, the parked turn), without its transcript,
-- so a page of sessions is one script per session sent together. Writes nothing.
-- KEYS[1] head hash   KEYS[2] metadata hash   KEYS[3] lease hash   KEYS[4] parked turn hash
-- Replies: {R.OK, rev, turn, in, out, cacheRead, cacheWrite, reasoning,
--           leaseTok, leaseGen, leaseExp, leaseOwnerJson, cost, nMeta, key1, value1, ...,
--           parkedField1, parkedValue1, ...}   leaseTok "" when no live lease; nMeta counts
--           the metadata strings that follow; the parked fields run to the end (none: not parked)
--          {R.NONE}   no commit yet (or deleted)
--- @include "clock"
--- @include "lease"
--- @include "num"

local head_key = KEYS[1]
local metadata_key = KEYS[2]
local lease_key = KEYS[3]
local parked_turn_key = KEYS[4]

local h = redis.call('HMGET', head_key, 'rev', 'turn', 'in', 'out', 'cr', 'cw', 'rs', 'cost')
if not h[1] then return { R.NONE } end
local reply = { R.OK }
for i = 1, 7 do reply[#reply + 1] = h[i] or '0' end
local lease = live_lease(lease_key, now_ms())
if lease then
  reply[#reply + 1] = lease.tok
  reply[#reply + 1] = num(lease.gen)
  reply[#reply + 1] = num(lease.exp)
  reply[#reply + 1] = lease.own
else
  for _, v in ipairs({ '', 0, 0, '' }) do reply[#reply + 1] = v end
end
reply[#reply + 1] = h[8] or '0'
local meta = redis.call('HGETALL', metadata_key)
reply[#reply + 1] = #meta
for _, v in ipairs(meta) do reply[#reply + 1] = v end
for _, v in ipairs(redis.call('HGETALL', parked_turn_key)) do reply[#reply + 1] = v end
return reply
