-- readLease: the live lease, judged by the Redis clock. Writes nothing.
-- KEYS[1] lease hash
-- Replies: {R.OK, tok, gen, exp, ownerJson, 0}
--          {R.NONE}   no live lease
local current = live_lease(KEYS[1], now_ms())
if not current then return { R.NONE } end
return lease_reply(R.OK, current, false)
