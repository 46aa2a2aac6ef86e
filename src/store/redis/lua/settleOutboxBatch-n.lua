-- settleOutboxBatch: the holder of a claim settles every row it took from one outbox in one step
-- (ADR 0021, "Batches"): done rows are removed; retried ones are kept for the endpoints still
-- owed, due later, one attempt more, their lease freed. A row is settled only while the token
-- still holds it (checked per row, before any write); others are left as they are.
-- With the batch's delivery records (ADR 0021 "Delivery records in the settle"; a standalone or
-- Sentinel Redis only: the tenant's keys are in another slot on Cluster), after the row checks
-- each attempt is recorded as recordWebhookDelivery-3.lua does, whoever holds its row (an attempt
-- that happened is logged); a retried row is then owed only to its targets still there and
-- enabled, and is removed when none is left.
-- With the hint index (a standalone or Sentinel Redis, where every write of outbox rows lists the
-- outbox in it in its own step: ADR 0021 "The hint dropped in the settle"), last, a settle that
-- leaves the outbox empty drops the outbox's hint (a row written after it lists it again), and
-- one that leaves rows makes it due when the first of them is owed a look (a retry's due time, a
-- live claim's lease end). A settle of no rows only does that.
-- The caller gives the key count (n in the file name): 1 on Cluster (no hint, no records), 2
-- without records, 4 + lists with them.
-- KEYS[1..] the outbox hash; off Cluster the due-outbox hint index; with records: the tenant's
--           endpoints hash, the tenant's endpoints version (moved by a disable), then one
--           delivery list per endpoint the records name
-- ARGV[1] claim token   ARGV[2] JSON [[event id, "done" | "retry", due ms, [endpoint ids]]...]
-- ARGV[3] the outbox id (the hint's member; "" without the hint index)
-- ARGV[4] with records (absent without): JSON [[key index of the endpoint's delivery list,
--         endpoint id, delivery JSON, ok (1 | 0)]...] in attempt order
-- ARGV[5] with records: the failure limit   ARGV[6] with records: the log length kept
-- Replies: {R.OK, rows settled, [endpoint id, disabled reason]... for each endpoint disabled}

--- @include "outbox"

local claim_token = ARGV[1]
local settlements_json = ARGV[2]
local outbox_id = ARGV[3]
local records_json = ARGV[4]
local failure_limit = ARGV[5]
local log_length_kept = ARGV[6]
-- The key list's fixed head (the outbox, the hint index off Cluster, then with records the
-- tenant's two keys); the delivery lists after them are named by index in ARGV[4].
local outbox_key, due_key, endpoints_key, version_key = unpack(KEYS, 1, 4)

-- The rows this token still holds (no write before every row is checked).
local held = {}
for _, s in ipairs(cjson.decode(settlements_json)) do
  local raw = redis.call('HGET', outbox_key, s[1])
  if raw then
    local row = cjson.decode(raw)
    if row.k == claim_token then held[#held + 1] = { s, row } end
  end
end

local reply = { R.OK, #held }
local records = records_json ~= nil
if records then
  local limit = tonumber(failure_limit)
  for _, d in ipairs(cjson.decode(records_json)) do
    local endpoint_id = d[2]
    local raw = redis.call('HGET', endpoints_key, endpoint_id)
    if raw then
      local e = cjson.decode(raw)
      if d[4] == 1 then
        e.consecutiveFailures = 0
      else
        e.consecutiveFailures = e.consecutiveFailures + 1
      end
      if not e.disabled and e.consecutiveFailures >= limit then
        e.disabled = true
        e.disabledReason = e.consecutiveFailures .. ' consecutive failed deliveries'
        redis.call('INCR', version_key)
        reply[#reply + 1] = endpoint_id
        reply[#reply + 1] = e.disabledReason
      end
      redis.call('HSET', endpoints_key, endpoint_id, cjson.encode(e))
      local deliveries_key = KEYS[d[1]]
      redis.call('LPUSH', deliveries_key, d[3])
      redis.call('LTRIM', deliveries_key, 0, tonumber(log_length_kept) - 1)
    end
  end
end

-- With the records: an endpoint still there and enabled is owed; a deleted or disabled one not.
local function owed(targets)
  if not records then return targets end
  local kept = {}
  for _, id in ipairs(targets) do
    local raw = redis.call('HGET', endpoints_key, id)
    if raw and not cjson.decode(raw).disabled then kept[#kept + 1] = id end
  end
  return kept
end

for _, h in ipairs(held) do
  local s, row = h[1], h[2]
  local targets = s[2] == 'retry' and owed(s[4]) or {}
  if s[2] == 'done' or (records and #targets == 0) then
    redis.call('HDEL', outbox_key, s[1])
  else
    row.a = row.a + 1
    row.d = tonumber(s[3])
    row.t = cjson.encode(targets)
    row.k = ''
    row.l = 0
    redis.call('HSET', outbox_key, s[1], cjson.encode(row))
  end
end
if due_key then settle_hint(due_key, outbox_key, outbox_id) end
return reply
