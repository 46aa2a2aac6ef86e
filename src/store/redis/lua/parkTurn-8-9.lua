-- parkTurn: under the live fence, store a turn that waits only for outside answers and release
-- its lease, in one step. Checks first: the fence, no other turn parked, every claim the turn
-- lists still held by this fence. Then its waits are recorded pending (unless recorded), its
-- record written, and the lease deleted. A cancel asked of the same turn's record while the turn
-- was resumed and running carries over: the new record is cancelled, and the turn resumable.
-- KEYS[1] lease hash   KEYS[2] parked turn hash   KEYS[3] the turn's tool call hash
-- KEYS[4] input hash   KEYS[5] work hash   KEYS[6] webhook outbox hash (ADR 0021)
-- KEYS[7] turn records hash   KEYS[8] turn order zset (lua/_turns.lua: the turn's record waits)
-- KEYS[9] the due-outbox hint index, on a standalone or Sentinel Redis; absent on Cluster (ADR
--         0021 "The hint dropped in the settle"): the event's row lists the outbox in it in this
--         step, due at ARGV[14] as expectOutbox makes it (ARGV[13] the writer's now), or at once
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] turn id   ARGV[4] ttl ms
-- ARGV[5] tool call retention ms   ARGV[6] progress   ARGV[7] JSON [wait ids]
-- ARGV[8] JSON [input ids]   ARGV[9] JSON [batch ids]
-- ARGV[10] webhook event id ("" for none)   ARGV[11] webhook event JSON
-- ARGV[12] the outbox id (the hint's member; with KEYS[9])
-- ARGV[13] the writer's now ms, or ""   ARGV[14] the hint's due ms, or "" (with KEYS[9])
-- Parked hash fields: turn, wait, prog, inp, bat (JSON lists), at, exp (ms), gen, cxl (0 | 1)
-- Replies: {R.OK, resumable (1 | 0), expiresAtMs}
--          {R.LEASE_EXPIRED}
--          {R.PARKED_MISMATCH, parkedTurnId}            another turn is parked
--          {R.INPUT_CLAIM_SUPERSEDED, id} / {R.QUEUE_CLAIM_SUPERSEDED, id}
--- @include "chunked"
--- @include "clock"
--- @include "lease"
--- @include "num"
--- @include "outbox"
--- @include "turns"

local lease_key = KEYS[1]
local parked_turn_key = KEYS[2]
local tool_calls_key = KEYS[3]
local inputs_key = KEYS[4]
local work_key = KEYS[5]
local webhook_outbox_key = KEYS[6]
local turn_records_key = KEYS[7]
local turn_order_key = KEYS[8]
local outbox_due_key = KEYS[9]
local lease_token = ARGV[1]
local fencing_token = ARGV[2]
local turn_id = ARGV[3]
local ttl_ms = ARGV[4]
local tool_call_retention_ms = ARGV[5]
local progress = ARGV[6]
local wait_ids_json = ARGV[7]
local input_ids_json = ARGV[8]
local batch_ids_json = ARGV[9]
local webhook_event_id = ARGV[10]
local webhook_event_json = ARGV[11]
local outbox_id = ARGV[12]
local writer_now_ms = ARGV[13]
local hint_due_ms = ARGV[14]
local turns = { records = turn_records_key, order = turn_order_key }

local now = now_ms()
local lease = live_lease(lease_key, now)
if not fence_matches(lease, lease_token, fencing_token) then return { R.LEASE_EXPIRED } end
local gen = tonumber(fencing_token)
local parked = redis.call('HGET', parked_turn_key, 'turn')
if parked and parked ~= turn_id then return { R.PARKED_MISMATCH, parked } end
local function held(key, ids, code)
  if #ids == 0 then return nil end
  local metas = hmget_all(key, ids)
  for j, id in ipairs(ids) do
    if not metas[j] then return { code, id } end
    local item = cjson.decode(metas[j])
    if item.state ~= 'claimed' or item.claimFencingToken ~= gen then return { code, item.claimId or id } end
  end
  return nil
end
local waits = cjson.decode(wait_ids_json)
local refused = held(inputs_key, cjson.decode(input_ids_json), R.INPUT_CLAIM_SUPERSEDED)
  or held(work_key, cjson.decode(batch_ids_json), R.QUEUE_CLAIM_SUPERSEDED)
if refused then return refused end

local settled = true
for _, id in ipairs(waits) do
  redis.call('HSETNX', tool_calls_key, id, '{"s":"p"}')
  if cjson.decode(redis.call('HGET', tool_calls_key, id)).s == 'p' then settled = false end
end
local ttl = tonumber(ttl_ms)
redis.call('PEXPIRE', tool_calls_key, num(ttl + tonumber(tool_call_retention_ms)))
local exp = now + ttl
local cxl = '0'
if parked and redis.call('HGET', parked_turn_key, 'cxl') == '1' then cxl = '1' end
redis.call('DEL', parked_turn_key)
redis.call('HSET', parked_turn_key, 'turn', turn_id, 'wait', wait_ids_json, 'prog', progress, 'inp', input_ids_json,
  'bat', batch_ids_json, 'at', num(now), 'exp', num(exp), 'gen', fencing_token, 'cxl', cxl)
redis.call('DEL', lease_key)
write_turn(turns, turn_id, 'waiting', now, nil)
if webhook_event_id ~= '' then
  write_outbox_row(webhook_outbox_key, webhook_event_id, webhook_event_json, '', now)
  if outbox_due_key and hint_due_ms ~= nil and hint_due_ms ~= '' then
    expect_outbox(outbox_due_key, outbox_id, writer_now_ms, hint_due_ms)
  elseif outbox_due_key then
    hint_outbox_now(outbox_due_key, outbox_id, now)
  end
end
return { R.OK, (settled or cxl == '1') and 1 or 0, num(exp) }
