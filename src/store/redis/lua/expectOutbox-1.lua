-- expectOutbox: before a script writes an outbox row (ADR 0021, "The hint"), make the outbox due
-- at ARGV[2], a delivery lease ahead: the writer's note after its write brings it to now, and a
-- writer lost in between leaves it due then. A hint due already (at or before ARGV[1]) moves to
-- ARGV[2], so a deliverer looking now sees a note newer than its look and does not drop it; one
-- due later moves earlier to ARGV[2].
-- KEYS[1] due-outbox index (sorted set)
-- ARGV[1] outbox id   ARGV[2] the writer's now (ms)   ARGV[3] due ms
-- Replies: {R.OK}
local current = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))
local due = tonumber(ARGV[3])
if current and current > tonumber(ARGV[2]) and current < due then return { R.OK } end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return { R.OK }
