-- enqueueWebhookEvent: add one event to an outbox unless its row is there already (ADR 0021).
-- With the hint index (a standalone or Sentinel Redis: ADR 0021 "The hint dropped in the
-- settle"), the outbox is listed in it due at once in the same step, whether or not the row was
-- new (a pending row is owed a look too); on Cluster the index is in another slot and the caller
-- notes it after.
-- KEYS[1] outbox hash
-- KEYS[2] the due-outbox hint index, on a standalone or Sentinel Redis; absent on Cluster
-- ARGV[1] event id   ARGV[2] event JSON   ARGV[3] JSON [endpoint ids], or "" for every endpoint
-- ARGV[4] the outbox id (the hint's member; with KEYS[2])
-- Replies: {R.OK} written   {R.DEDUPLICATED} a row of that event id is pending already
--- @include "clock"
--- @include "outbox"

local outbox_key = KEYS[1]
local due_key = KEYS[2]
local event_id = ARGV[1]
local event_json = ARGV[2]
local targets_json = ARGV[3]
local outbox_id = ARGV[4]

local now = now_ms()
local written = write_outbox_row(outbox_key, event_id, event_json, targets_json, now)
if due_key then hint_outbox_now(due_key, outbox_id, now) end
if written then return { R.OK } end
return { R.DEDUPLICATED }
