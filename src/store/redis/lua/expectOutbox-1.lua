-- expectOutbox: before a script writes an outbox row (ADR 0021, "The hint"), make the outbox due
-- at ARGV[2], a delivery lease ahead: the writer's note after its write brings it to now, and a
-- writer lost in between leaves it due then. A hint due already (at or before ARGV[1]) moves to
-- ARGV[2], so a deliverer looking now sees a note newer than its look and does not drop it; one
-- due later moves earlier to ARGV[2].
-- KEYS[1] due-outbox index (sorted set)
-- ARGV[1] outbox id   ARGV[2] the writer's now (ms)   ARGV[3] due ms
-- Replies: {R.OK}

local due_key = KEYS[1]
local outbox_id = ARGV[1]
local writer_now_ms = ARGV[2]
local due_ms = ARGV[3]

local current = tonumber(redis.call('ZSCORE', due_key, outbox_id))
local due = tonumber(due_ms)
if current and current > tonumber(writer_now_ms) and current < due then return { R.OK } end
redis.call('ZADD', due_key, due_ms, outbox_id)
return { R.OK }
