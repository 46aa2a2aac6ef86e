-- releaseLease: clear the lease when the fence names it (live or expired); idempotent, and a
-- stale fence never clears a newer lease. The generation counter is not touched.
-- KEYS[1] lease hash
-- ARGV[1] lease token   ARGV[2] fencing token
-- Replies: {R.OK}        released
--          {R.NOT_HELD}  no lease, or another one
if not fence_matches(read_lease(KEYS[1]), ARGV[1], ARGV[2]) then return { R.NOT_HELD } end
redis.call('DEL', KEYS[1])
return { R.OK }
