-- releaseIfIdle: releaseLease, in the same step as a look for anything that waits for a holder:
-- a parked turn, queued work (ready or claimed), an open input to run next or one claimed (its
-- claimant may be gone). With any, the lease stays, so a released holder leaves nothing behind.
-- KEYS[1] lease hash   KEYS[2] input hash   KEYS[3] input index zset
-- KEYS[4] head hash (the settled-inputs watermark)   KEYS[5] work index zset
-- KEYS[6] parked turn hash
-- KEYS[7] the ready index, on a standalone Redis only (ADR 0024): a release clears the session's
--         mark in this step; absent on Cluster (the runtime clears it there)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] session id (the ready index's member)
-- Replies: {R.OK}        released
--          {R.BUSY}      kept: something waits for a holder
--          {R.NOT_HELD}  no lease, or another one
--- @include "inputs"
--- @include "lease"

local lease_key = KEYS[1]
local inputs_key = KEYS[2]
local input_index_key = KEYS[3]
local head_key = KEYS[4]
local work_index_key = KEYS[5]
local parked_turn_key = KEYS[6]
local ready_index_key = KEYS[7]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local session_id = ARGV[3]

if not fence_matches(read_lease(lease_key), lease_token, fencing_token) then return { R.NOT_HELD } end
if waits_for_holder(head_key, inputs_key, input_index_key, work_index_key, parked_turn_key) then return { R.BUSY } end
redis.call('DEL', lease_key)
if ready_index_key then redis.call('ZREM', ready_index_key, session_id) end
return { R.OK }
