-- claimOutbox: take up to max due rows whose lease is free (never taken or expired) under one
-- claim token for lease ms; a dead deliverer's rows come back once their lease ran out.
-- KEYS[1] outbox hash
-- ARGV[1] claim token   ARGV[2] lease ms   ARGV[3] max rows
-- Replies: {R.OK, remaining rows, lease until ms, n, [event JSON, attempts, due ms, targets]...}
--- @include "clock"
--- @include "outbox"

local outbox_key = KEYS[1]
local claim_token = ARGV[1]
local lease_ms = ARGV[2]
local max_rows = ARGV[3]

local now = now_ms()
local claim = claim_outbox_rows(outbox_key, claim_token, now, now + tonumber(lease_ms), tonumber(max_rows))
local reply = { R.OK }
for _, v in ipairs(claim) do reply[#reply + 1] = v end
return reply
