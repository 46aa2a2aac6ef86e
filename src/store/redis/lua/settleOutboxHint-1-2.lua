-- settleOutboxHint: a deliverer's look at an outbox, begun at ARGV[2], is over: the outbox is
-- due again at ARGV[3], or dropped when ARGV[3] is "". A hint due after ARGV[2] was noted after
-- the look began (a writer's expect or note, ADR 0021 "The hint") and stands, moved earlier to
-- ARGV[3] if that is earlier.
-- A drop finds rows written after the look (by a writer that did not live to note them): then
-- the hint stays, due at once. Where the outbox is on the same server (standalone, Sentinel) that
-- check is in this step (KEYS[2]); on Cluster the caller makes it after, with HLEN.
-- KEYS[1] due-outbox index (sorted set)
-- KEYS[2] the outbox hash, on a standalone or Sentinel Redis; absent on Cluster (another slot)
-- ARGV[1] outbox id   ARGV[2] when the look began (ms)   ARGV[3] next due ms, or ""
-- Replies: {R.OK, dropped (0|1)}   (0 also when KEYS[2] holds rows: the hint is then due at once)

local due_key = KEYS[1]
local outbox_key = KEYS[2]
local outbox_id = ARGV[1]
local look_began_ms = ARGV[2]
local next_due_ms = ARGV[3]

local current = tonumber(redis.call('ZSCORE', due_key, outbox_id))
local seen = tonumber(look_began_ms)
if current and current > seen then
  if next_due_ms ~= '' and tonumber(next_due_ms) < current then
    redis.call('ZADD', due_key, next_due_ms, outbox_id)
  end
  return { R.OK, 0 }
end
if next_due_ms ~= '' then
  redis.call('ZADD', due_key, next_due_ms, outbox_id)
  return { R.OK, 0 }
end
if outbox_key and redis.call('HLEN', outbox_key) > 0 then
  redis.call('ZADD', due_key, 'LT', 0, outbox_id)
  return { R.OK, 0 }
end
redis.call('ZREM', due_key, outbox_id)
return { R.OK, 1 }
