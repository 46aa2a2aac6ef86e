-- parkTurn: under the live fence, store a turn that waits only for outside answers and release
-- its lease, in one step. Checks first: the fence, no other turn parked, every claim the turn
-- lists still held by this fence. Then its waits are recorded pending (unless recorded), its
-- record written, and the lease deleted. A cancel asked of the same turn's record while the turn
-- was resumed and running carries over: the new record is cancelled, and the turn resumable.
-- KEYS[1] lease hash   KEYS[2] parked turn hash   KEYS[3] the turn's tool call hash
-- KEYS[4] input hash   KEYS[5] work hash   KEYS[6] webhook outbox hash (ADR 0021)
-- ARGV[1] lease token   ARGV[2] fencing token   ARGV[3] turn id   ARGV[4] ttl ms
-- ARGV[5] tool call retention ms   ARGV[6] progress   ARGV[7] JSON [wait ids]
-- ARGV[8] JSON [input ids]   ARGV[9] JSON [batch ids]
-- ARGV[10] webhook event id ("" for none)   ARGV[11] webhook event JSON
-- Parked hash fields: turn, wait, prog, inp, bat (JSON lists), at, exp (ms), gen, cxl (0 | 1)
-- Replies: {R.OK, resumable (1 | 0), expiresAtMs}
--          {R.LEASE_EXPIRED}
--          {R.PARKED_MISMATCH, parkedTurnId}            another turn is parked
--          {R.INPUT_CLAIM_SUPERSEDED, id} / {R.QUEUE_CLAIM_SUPERSEDED, id}
local now = now_ms()
local lease = live_lease(KEYS[1], now)
if not fence_matches(lease, ARGV[1], ARGV[2]) then return { R.LEASE_EXPIRED } end
local gen = tonumber(ARGV[2])
local parked = redis.call('HGET', KEYS[2], 'turn')
if parked and parked ~= ARGV[3] then return { R.PARKED_MISMATCH, parked } end
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
local waits = cjson.decode(ARGV[7])
local refused = held(KEYS[4], cjson.decode(ARGV[8]), R.INPUT_CLAIM_SUPERSEDED)
  or held(KEYS[5], cjson.decode(ARGV[9]), R.QUEUE_CLAIM_SUPERSEDED)
if refused then return refused end

local settled = true
for _, id in ipairs(waits) do
  redis.call('HSETNX', KEYS[3], id, '{"s":"p"}')
  if cjson.decode(redis.call('HGET', KEYS[3], id)).s == 'p' then settled = false end
end
local ttl = tonumber(ARGV[4])
redis.call('PEXPIRE', KEYS[3], num(ttl + tonumber(ARGV[5])))
local exp = now + ttl
local cxl = '0'
if parked and redis.call('HGET', KEYS[2], 'cxl') == '1' then cxl = '1' end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'turn', ARGV[3], 'wait', ARGV[7], 'prog', ARGV[6], 'inp', ARGV[8],
  'bat', ARGV[9], 'at', num(now), 'exp', num(exp), 'gen', ARGV[2], 'cxl', cxl)
redis.call('DEL', KEYS[1])
if ARGV[10] ~= '' then write_outbox_row(KEYS[6], ARGV[10], ARGV[11], '', now) end
return { R.OK, (settled or cxl == '1') and 1 or 0, num(exp) }
