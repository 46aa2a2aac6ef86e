-- claimReadyWork: under the live fence, claim the leading eligible batch and, for a join
-- leader, every eligible join batch of the same class, delivery policy and merge key.
-- Eligible: ready, or claimed by a lower generation; at an active-turn checkpoint only
-- earliest_safe_boundary batches. Leader: session_command before turn_work, then by sequence.
-- KEYS[1] lease hash   KEYS[2] work hash   KEYS[3] work payload hash   KEYS[4] work index zset
-- KEYS[5] parked turn hash (while a turn is parked, idle claims find nothing)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] boundary (idle | active_turn_checkpoint)
-- ARGV[4] max batches   ARGV[5] claim id
-- Replies: {R.OK, batchJson1, payload1, ...}   claimed (batches carry the new claim)
--          {R.NONE}                            nothing eligible
--          {R.LEASE_EXPIRED}                   the fence is not the live lease
--- @include "chunked"
--- @include "claims"
--- @include "clock"
--- @include "lease"

local lease_key = KEYS[1]
local work_key = KEYS[2]
local work_payloads_key = KEYS[3]
local work_index_key = KEYS[4]
local parked_turn_key = KEYS[5]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local boundary = ARGV[3]
local max_batches = ARGV[4]
local claim_id = ARGV[5]

local lease = live_lease(lease_key, now_ms())
if not fence_matches(lease, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
local gen = tonumber(fencing_token)
local at_checkpoint = boundary == 'active_turn_checkpoint'
if not at_checkpoint and redis.call('EXISTS', parked_turn_key) == 1 then return { R.NONE } end
local ids = redis.call('ZRANGE', work_index_key, 0, -1)
local metas = hmget_all(work_key, ids)
local eligible = {}
local leader = nil
for i = 1, #ids do
  if metas[i] then
    local b = cjson.decode(metas[i])
    if claimable(b, 'ready', gen) and (not at_checkpoint or b.deliveryPolicy == 'earliest_safe_boundary') then
      eligible[#eligible + 1] = b
      if leader == nil or (leader.workClass ~= 'session_command' and b.workClass == 'session_command') then
        leader = b
      end
    end
  end
end
if leader == nil then return { R.NONE } end
local taken = { leader }
if leader.slotPolicy == 'join' then
  taken = {}
  local max = tonumber(max_batches)
  for _, b in ipairs(eligible) do
    if #taken >= max then break end
    if b.slotPolicy == 'join' and b.workClass == leader.workClass
      and b.deliveryPolicy == leader.deliveryPolicy and b.mergeKey == leader.mergeKey then
      taken[#taken + 1] = b
    end
  end
end
return append_claimed({ R.OK }, work_key, work_payloads_key, taken, 'batchId', gen, claim_id)
