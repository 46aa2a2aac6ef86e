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
if not fence_matches(read_lease(KEYS[1]), ARGV[1], ARGV[2]) then return { R.NOT_HELD } end
if waits_for_holder(KEYS[4], KEYS[2], KEYS[3], KEYS[5], KEYS[6]) then return { R.BUSY } end
redis.call('DEL', KEYS[1])
if KEYS[7] then redis.call('ZREM', KEYS[7], ARGV[3]) end
return { R.OK }
