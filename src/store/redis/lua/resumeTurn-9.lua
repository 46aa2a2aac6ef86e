-- resumeTurn: under the live fence, look at the session's parked turn `turn id`. When it can go
-- on (every wait settled, a cancel asked, or expired), its claims move to this fence under new
-- claim ids; while it waits nothing changes. The record stays until the turn's commit.
-- KEYS[1] lease hash   KEYS[2] parked turn hash   KEYS[3] the turn's tool call hash
-- KEYS[4] input hash   KEYS[5] input payload hash   KEYS[6] work hash   KEYS[7] work payload hash
-- KEYS[8] turn records hash   KEYS[9] turn order zset (lua/_turns.lua: a turn that goes on is
--         in_progress again)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] turn id   ARGV[4] input claim id
-- ARGV[5] work claim id
-- Replies: {R.OK, status, n, field1, value1, ... (n strings: the parked hash),
--           m, inputJson1, payload1, ... (m items), k, batchJson1, payload1, ... (k items)}
--            status: waiting | answered | cancelled | expired; items only when not waiting
--          {R.NONE}            no parked turn of that id
--          {R.LEASE_EXPIRED}
--- @include "chunked"
--- @include "claims"
--- @include "clock"
--- @include "lease"
--- @include "turns"

local lease_key = KEYS[1]
local parked_turn_key = KEYS[2]
local tool_calls_key = KEYS[3]
local inputs_key = KEYS[4]
local input_payloads_key = KEYS[5]
local work_key = KEYS[6]
local work_payloads_key = KEYS[7]
local turn_records_key = KEYS[8]
local turn_order_key = KEYS[9]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local turn_id = ARGV[3]
local input_claim_id = ARGV[4]
local work_claim_id = ARGV[5]
local turns = { records = turn_records_key, order = turn_order_key }

local now = now_ms()
local lease = live_lease(lease_key, now)
if not fence_matches(lease, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
local gen = tonumber(fencing_token)
if redis.call('HGET', parked_turn_key, 'turn') ~= turn_id then return { R.NONE } end
local fields = redis.call('HGETALL', parked_turn_key)
local p = {}
for i = 1, #fields, 2 do p[fields[i]] = fields[i + 1] end

local status
if p.cxl == '1' then
  status = 'cancelled'
elseif tonumber(p.exp) <= now then
  status = 'expired'
else
  status = 'answered'
  for _, id in ipairs(cjson.decode(p.wait)) do
    local raw = redis.call('HGET', tool_calls_key, id)
    if not raw or cjson.decode(raw).s == 'p' then
      status = 'waiting'
      break
    end
  end
end
local reply = { R.OK, status, #fields }
for i = 1, #fields do reply[#reply + 1] = fields[i] end
if status == 'waiting' then return reply end
write_turn(turns, turn_id, 'in_progress', now, nil)

-- The items of `ids` still claimed (by the parking generation); their count goes in the reply.
local function still_claimed(key, ids)
  local taken = {}
  if #ids > 0 then
    local metas = hmget_all(key, ids)
    for j = 1, #ids do
      if metas[j] then
        local item = cjson.decode(metas[j])
        if item.state == 'claimed' then taken[#taken + 1] = item end
      end
    end
  end
  reply[#reply + 1] = #taken
  return taken
end
local inputs = still_claimed(inputs_key, cjson.decode(p.inp))
append_claimed(reply, inputs_key, input_payloads_key, inputs, 'inputId', gen, input_claim_id)
local batches = still_claimed(work_key, cjson.decode(p.bat))
append_claimed(reply, work_key, work_payloads_key, batches, 'batchId', gen, work_claim_id)
return reply
