-- expectOutbox: before a script writes an outbox row (ADR 0021, "The hint"), make the outbox due
-- at ARGV[3], a delivery lease ahead: the writer's note after its write brings it to now, and a
-- writer lost in between leaves it due then. A hint due already (at or before ARGV[2]) moves to
-- ARGV[3], so a deliverer looking now sees a note newer than its look and does not drop it; one
-- due later moves earlier to ARGV[3]. (The commit's step does the same on a standalone Redis.)
-- KEYS[1] due-outbox index (sorted set)
-- ARGV[1] outbox id   ARGV[2] the writer's now (ms)   ARGV[3] due ms
-- Replies: {R.OK}
--- @include "outbox"

local due_key = KEYS[1]
local outbox_id = ARGV[1]
local writer_now_ms = ARGV[2]
local due_ms = ARGV[3]

expect_outbox(due_key, outbox_id, writer_now_ms, due_ms)
return { R.OK }
