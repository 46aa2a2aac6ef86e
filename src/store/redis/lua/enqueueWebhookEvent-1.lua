-- enqueueWebhookEvent: add one event to an outbox unless its row is there already (ADR 0021).
-- KEYS[1] outbox hash
-- ARGV[1] event id   ARGV[2] event JSON   ARGV[3] JSON [endpoint ids], or "" for every endpoint
-- Replies: {R.OK} written   {R.DEDUPLICATED} a row of that event id is pending already
--- @include "clock"
--- @include "outbox"

local outbox_key = KEYS[1]
local event_id = ARGV[1]
local event_json = ARGV[2]
local targets_json = ARGV[3]

if write_outbox_row(outbox_key, event_id, event_json, targets_json, now_ms()) then return { R.OK } end
return { R.DEDUPLICATED }
