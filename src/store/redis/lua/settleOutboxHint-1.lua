-- settleOutboxHint: a deliverer's look at an outbox, begun at ARGV[2], is over: the outbox is
-- due again at ARGV[3], or dropped when ARGV[3] is "". A hint due after ARGV[2] was noted after
-- the look began (a writer's expect or note, ADR 0021 "The hint") and stands, moved earlier to
-- ARGV[3] if that is earlier.
-- KEYS[1] due-outbox index (sorted set)
-- ARGV[1] outbox id   ARGV[2] when the look began (ms)   ARGV[3] next due ms, or ""
-- Replies: {R.OK, dropped (0|1)}
local current = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))
local seen = tonumber(ARGV[2])
if current and current > seen then
  if ARGV[3] ~= '' and tonumber(ARGV[3]) < current then
    redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  end
  return { R.OK, 0 }
end
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return { R.OK, 0 }
end
redis.call('ZREM', KEYS[1], ARGV[1])
return { R.OK, 1 }
