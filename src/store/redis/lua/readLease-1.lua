-- readLease: the live lease, judged by the Redis clock. Writes nothing.
-- KEYS[1] lease hash
-- Replies: {R.OK, tok, gen, exp, ownerJson, 0}
--          {R.NONE}   no live lease
--- @include "clock"
--- @include "lease"

local lease_key = KEYS[1]

local current = live_lease(lease_key, now_ms())
if not current then return { R.NONE } end
return lease_reply(R.OK, current, false)
