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
--- @include "clock"
--- @include "lease-grant"
--- @include "lease"

local lease_key = KEYS[1]
local gen_key = KEYS[2]
local owner_json = ARGV[1]
local owner_id = ARGV[2]
local incarnation_id = ARGV[3]
local new_lease_token = ARGV[4]
local ttl_ms = ARGV[5]
local observed_lease_token = ARGV[6]
local observed_fencing_token = ARGV[7]
local observed_dead = ARGV[8]

local now = now_ms()
local current = live_lease(lease_key, now)
if current and not (fence_matches(current, observed_lease_token, observed_fencing_token) and observed_dead == '1') then
  return lease_reply(R.BUSY, current, false)
end
local lease = acquire_lease(lease_key, gen_key, owner_json, owner_id, incarnation_id, new_lease_token, now, now + tonumber(ttl_ms))
return lease_reply(R.OK, lease, false)
