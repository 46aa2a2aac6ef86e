-- claimWorkByIds: under the live fence, claim the named batches. Every id must exist (else
-- nothing changes). Claimable ids, and ids this generation already holds, are claimed now
-- under the new claim id; completed or cancelled ones are already satisfied.
-- KEYS[1] lease hash   KEYS[2] work hash   KEYS[3] work payload hash
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] claim id   ARGV[4..] batch ids
-- Replies: {R.OK, n, id1, status1, ..., idn, statusn, batchJson1, payload1, ...}
--            status: claimed_now | already_satisfied; then the claimed batches
--          {R.UNKNOWN_IDS, id1, id2, ...}   ids with no batch
--          {R.LEASE_EXPIRED}
--- @include "chunked"
--- @include "claims"
--- @include "clock"
--- @include "lease"

local lease_key = KEYS[1]
local work_key = KEYS[2]
local work_payloads_key = KEYS[3]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local claim_id = ARGV[3]

local lease = live_lease(lease_key, now_ms())
if not fence_matches(lease, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
local gen = tonumber(fencing_token)
local ids = {}
for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
local metas = hmget_all(work_key, ids)
local missing = { R.UNKNOWN_IDS }
for i = 1, #ids do
  if not metas[i] then missing[#missing + 1] = ids[i] end
end
if #missing > 1 then return missing end
local seen = {}
local statuses = {}
local taken = {}
for i = 1, #ids do
  local id = ids[i]
  if not seen[id] then
    seen[id] = true
    local b = cjson.decode(metas[i])
    local ours = b.state == 'claimed' and b.claimFencingToken == gen
    statuses[#statuses + 1] = id
    if claimable(b, 'ready', gen) or ours then
      taken[#taken + 1] = b
      statuses[#statuses + 1] = 'claimed_now'
    else
      statuses[#statuses + 1] = 'already_satisfied'
    end
  end
end
local reply = { R.OK, #statuses / 2 }
for _, s in ipairs(statuses) do reply[#reply + 1] = s end
return append_claimed(reply, work_key, work_payloads_key, taken, 'batchId', gen, claim_id)
