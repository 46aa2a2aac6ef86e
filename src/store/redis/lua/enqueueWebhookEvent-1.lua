-- enqueueWebhookEvent: add one event to an outbox unless its row is there already (ADR 0021).
-- KEYS[1] outbox hash
-- ARGV[1] event id   ARGV[2] event JSON   ARGV[3] JSON [endpoint ids], or "" for every endpoint
-- Replies: {R.OK} written   {R.DEDUPLICATED} a row of that event id is pending already
if write_outbox_row(KEYS[1], ARGV[1], ARGV[2], ARGV[3], now_ms()) then return { R.OK } end
return { R.DEDUPLICATED }
