-- reclaimLease: take the lease over from an observed holder the claimant proved dead.
-- The claimant ran the liveness probe (the pid lives on its host); this script decides
-- atomically whether the observed holder is still the current one.
-- KEYS[1] lease hash          KEYS[2] lease generation counter (never deleted; see acquire_lease)
-- ARGV[1] claimant JSON   ARGV[2] claimant owner id   ARGV[3] claimant incarnation id
-- ARGV[4] lease token for the new generation   ARGV[5] ttl in ms
-- ARGV[6] observed lease token   ARGV[7] observed fencing token
-- ARGV[8] "1" when the observed holder is provably dead for the claimant, else "0"
-- Replies: {R.OK, tok, gen, exp, ownerJson, 0}     no live lease, or the dead holder replaced
--          {R.BUSY, tok, gen, exp, holderJson, 0}  the current holder, which stays
local now = now_ms()
local current = live_lease(KEYS[1], now)
if current and not (fence_matches(current, ARGV[6], ARGV[7]) and ARGV[8] == '1') then
  return lease_reply(R.BUSY, current, false)
end
local lease = acquire_lease(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], now, now + tonumber(ARGV[5]))
return lease_reply(R.OK, lease, false)
