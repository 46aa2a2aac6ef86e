-- releaseLease: clear the lease when the fence names it (live or expired); idempotent, and a
-- stale fence never clears a newer lease. The generation counter is not touched.
-- KEYS[1] lease hash
-- ARGV[1] lease token   ARGV[2] fencing token
-- Replies: {R.OK}        released
--          {R.NOT_HELD}  no lease, or another one
--- @include "lease"

local lease_key = KEYS[1]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]

if not fence_matches(read_lease(lease_key), lease_token, fencing_token) then return { R.NOT_HELD } end
redis.call('DEL', lease_key)
return { R.OK }
