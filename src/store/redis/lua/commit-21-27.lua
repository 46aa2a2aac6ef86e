-- commit: apply one commit atomically. Every check comes before the first write, because Redis
-- does not roll back a script that stops halfway: stamp, then head CAS, then claim completions
-- against the live lease generation; then head + 1, messages, usage, turn, metadata, claimed
-- items completed, stamp recorded, and the advisory lease release; with an announcement, the
-- turn's end (its log entry, its signals and tool calls closed) and the release if idle.
-- KEYS[1] head hash        KEYS[2] message list    KEYS[3] metadata hash   KEYS[4] stamp hash
-- KEYS[5] lease hash       KEYS[6] work hash       KEYS[7] work index zset KEYS[8] input hash
-- KEYS[9] input index zset (to move the settled-inputs watermark, see _inputs.lua)
-- KEYS[10] parked turn hash (removed by the commit of the parked turn)
-- KEYS[11] history list   KEYS[12] metadata log (see _history.lua: every revision stays readable)
-- KEYS[13] webhook outbox hash (ADR 0021: the event is written in the commit's step)
-- KEYS[14] events stream   KEYS[15] event sequence counter (ADR 0011: a turn's announcement)
-- KEYS[16] the running-turn marker   KEYS[17] the announced turn's cancel key
-- KEYS[18] the announced turn's stored answers (signals.ts; without an announcement, unused)
-- KEYS[19] the announced turn's client tool call hash (closed in this step; else unused)
-- KEYS[20] turn records hash   KEYS[21] turn order zset (lua/_turns.lua: `te` ends the record)
-- KEYS[22] the ready index, on a standalone Redis only (ADR 0024): a release of an idle session
--          clears its mark in this step; absent on Cluster (the runtime clears it there)
-- -- Webhooks folded into the commit (ADR 0021 "Folded into the commit"): on a standalone or
-- -- Sentinel Redis only, after KEYS[22]; absent on Cluster (other slots: separate steps there).
-- KEYS[23] the due-outbox hint index (the expect, with wf)
-- KEYS[24] the session's tenant's endpoints version (read with wf's claim)
-- ---- Tenant limits in the commit's step (ADR 0038): only with `tc`, only on a standalone or
-- ---- Sentinel Redis (after the fold's keys); never on Cluster (another slot).
-- KEYS[25] the tenant's quota slots zset   KEYS[26] the tenant's quota counters hash (_quota.lua)
-- KEYS[27] the tenant's spend hash (chargeTenantSpend-1.lua)
-- ARGV[1] commit JSON: { e = expected head, op = stamp operation id ("" for none),
--           h = stamp content hash, t = advance turn (bool), u = [input, output, cacheRead,
--           cacheWrite, reasoning], r = [lease token, fencing token] or [] for no release,
--           q = [[claim id, fencing token, [batch ids]]...], i = same for input claims,
--           m = [key, value, ...] (value "" removes the key),
--           ml = [max metadata bytes, max metadata history bytes] or absent (ADR 0029: the
--                metadata after the patch, keys plus values, and every patch the session
--                keeps, counted in the head's 'mlb', stay within them),
--           p = the parked turn this commit ends ("" for none),
--           f = the turn whose pending steered inputs become next-turn input ("" for none),
--           c = cost in micros added to the head's 'cost' (ADR 0016; 0 or absent for none),
--           w = [[webhook event id, event JSON]...], [] for none,
--           a = [lease token, fencing token, turn id, event JSON, stream max length, release if
--               idle (bool), session id, tool call retention ms, held events JSON list (ADR
--               0040; [] or absent for none)] or [] for none: the turn's announcement, its held
--               events first, in order, then the event, appended as appendEvents would (one
--               sequence number each, under the same fence check), then the lease released unless
--               something waits for a holder (and the session's ready mark cleared with it,
--               KEYS[22]); the turn's signals end in the step as unlistenTurn ends them (ADR
--               0024), and its open client tool calls are closed as closeToolCalls closes them,
--               so nothing of the turn needs the lease after its announcement,
--           te = [turn id, end status, outcome JSON] or absent: the turn this commit ends, its
--                record completed, failed or cancelled with the commit's usage,
--           wf = [writer now ms, due ms, outbox id, claim token or "", lease ms, max rows] or
--                absent (needs KEYS[23], KEYS[24]): with w, the hint's expect as expectOutbox does it,
--                and with a token the outbox's due free rows claimed as claimOutbox claims them,
--           tc = [slot holder ("" for none), quota tokens (0 for none), spend window ("" for
--                none), spend micros] or absent: the tenant's charges, applied after every
--                other write as releaseTurnSlot, chargeTokens and chargeTenantSpend apply
--                them (the keys 25 to 27); a commit refused or replayed applies none }
-- ARGV[2..] messages to append, in order
-- Replies: {R.OK, headRevision}                  without an announcement
--          {R.OK, headRevision, seq, released}   with one: its sequence number (its held events
--                                                  have the ones just before); 1 when released
--          {R.OK, headRevision, seq or 0, released or 0, {endpoints version, rows in the outbox,
--            lease until ms, n, [event JSON, attempts, due ms, targets]...}}   with wf's claim
--          {R.LEASE_EXPIRED}                  the announcement's fence is not the live lease
--          {R.STAMP_REPLAYED, headRevision}   the stamp's recorded result; nothing changed
--          {R.STAMP_CONFLICT}                 the stamp was recorded with another hash
--          {R.HEAD_CONFLICT, actualHead}
--          {R.QUEUE_CLAIM_SUPERSEDED, claimId} / {R.INPUT_CLAIM_SUPERSEDED, claimId}
--          {R.PARKED_MISMATCH, parkedTurnId or ""}  p names a turn that is not the parked one
--          {R.QUOTA_REFUSED, limit name}       the patch would pass a limit of ml (nothing changed)
--- @include "chunked"
--- @include "clock"
--- @include "epoch"
--- @include "history"
--- @include "inputs"
--- @include "lease"
--- @include "num"
--- @include "outbox"
--- @include "quota"
--- @include "tool-calls"
--- @include "turns"

local head_key = KEYS[1]
local messages_key = KEYS[2]
local metadata_key = KEYS[3]
local stamp_key = KEYS[4]
local lease_key = KEYS[5]
local work_key = KEYS[6]
local work_index_key = KEYS[7]
local inputs_key = KEYS[8]
local input_index_key = KEYS[9]
local parked_turn_key = KEYS[10]
local history_key = KEYS[11]
local metadata_log_key = KEYS[12]
local webhook_outbox_key = KEYS[13]
local events_key = KEYS[14]
local event_seq_key = KEYS[15]
local running_key = KEYS[16]
local cancel_key = KEYS[17]
local answers_key = KEYS[18]
local tool_calls_key = KEYS[19]
local turn_records_key = KEYS[20]
local turn_order_key = KEYS[21]
local ready_index_key = KEYS[22]
-- Webhooks folded into the commit (standalone and Sentinel only).
local outbox_due_key = KEYS[23]
local endpoints_version_key = KEYS[24]
-- Tenant limits in the commit's step (standalone and Sentinel only, with tc).
local quota_slots_key = KEYS[25]
local quota_counters_key = KEYS[26]
local tenant_spend_key = KEYS[27]
local commit_json = ARGV[1]
local turns = { records = turn_records_key, order = turn_order_key }

local spec = cjson.decode(commit_json)

if spec.op ~= '' then
  local recorded = redis.call('HGET', stamp_key, spec.op)
  if recorded then
    local r = cjson.decode(recorded)
    if r.h == spec.h then return { R.STAMP_REPLAYED, r.rev } end
    return { R.STAMP_CONFLICT }
  end
end

local head = tonumber(redis.call('HGET', head_key, 'rev') or '0')
if head ~= spec.e then return { R.HEAD_CONFLICT, head } end

if spec.p ~= '' then
  local parked = redis.call('HGET', parked_turn_key, 'turn')
  if parked ~= spec.p then return { R.PARKED_MISMATCH, parked or '' } end
end

-- Completions: the claim's generation must hold the live lease, and every item must still be
-- claimed under that claim id. Items are decoded once here and written back below.
local lease = live_lease(lease_key, now_ms())
local settled = {}
local function check_claims(claims, key)
  for _, c in ipairs(claims) do
    if lease == nil or lease.gen ~= c[2] then return c[1] end
    local metas = hmget_all(key, c[3])
    for j, id in ipairs(c[3]) do
      if not metas[j] then return c[1] end
      local item = cjson.decode(metas[j])
      if item.state ~= 'claimed' or item.claimId ~= c[1] then return c[1] end
      settled[#settled + 1] = { key = key, id = id, item = item }
    end
  end
  return nil
end
local stale = check_claims(spec.q, work_key)
if stale then return { R.QUEUE_CLAIM_SUPERSEDED, stale } end
stale = check_claims(spec.i, inputs_key)
if stale then return { R.INPUT_CLAIM_SUPERSEDED, stale } end
local announce = spec.a and #spec.a > 0 and spec.a or nil
if announce and not fence_matches(lease, announce[1], announce[2]) then
  return { R.LEASE_EXPIRED }
end

local patch_bytes = 0
for n = 1, #spec.m, 2 do patch_bytes = patch_bytes + #spec.m[n] + #spec.m[n + 1] end
if #spec.m > 0 and spec.ml and #spec.ml == 2 then
  local logged = tonumber(redis.call('HGET', head_key, 'mlb') or '0')
  if logged + patch_bytes > spec.ml[2] then return { R.QUOTA_REFUSED, 'metadata_history_bytes' } end
  local after = {}
  local current = redis.call('HGETALL', metadata_key)
  for n = 1, #current, 2 do after[current[n]] = #current[n] + #current[n + 1] end
  for n = 1, #spec.m, 2 do
    after[spec.m[n]] = spec.m[n + 1] ~= '' and #spec.m[n] + #spec.m[n + 1] or nil
  end
  local size = 0
  for _, bytes in pairs(after) do size = size + bytes end
  if size > spec.ml[1] then return { R.QUOTA_REFUSED, 'session_metadata_bytes' } end
end

-- Every check passed: write.
local rev = head + 1
redis.call('HSET', head_key, 'rev', rev)
if head == 0 then ensure_epoch(head_key) end
if spec.t then redis.call('HINCRBY', head_key, 'turn', 1) end
local usage_fields = { 'in', 'out', 'cr', 'cw', 'rs' }
for n, field in ipairs(usage_fields) do
  if spec.u[n] > 0 then redis.call('HINCRBY', head_key, field, num(spec.u[n])) end
end
if spec.c and spec.c > 0 then redis.call('HINCRBY', head_key, 'cost', num(spec.c)) end
for i = 2, #ARGV, 500 do
  redis.call('RPUSH', messages_key, unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
for n = 1, #spec.m, 2 do
  if spec.m[n + 1] == '' then
    redis.call('HDEL', metadata_key, spec.m[n])
  else
    redis.call('HSET', metadata_key, spec.m[n], spec.m[n + 1])
  end
end
for _, s in ipairs(settled) do
  s.item.state = 'completed'
  redis.call('HSET', s.key, s.id, cjson.encode(s.item))
  if s.key == work_key then redis.call('ZREM', work_index_key, s.id) end
end
if #spec.i > 0 then advance_input_watermark(head_key, input_index_key, inputs_key, 256) end
if spec.op ~= '' then
  redis.call('HSET', stamp_key, spec.op, cjson.encode({ h = spec.h, rev = rev }))
end
if spec.p ~= '' then redis.call('DEL', parked_turn_key) end
if spec.f ~= '' then defer_turn_inputs(head_key, input_index_key, inputs_key, spec.f) end
local turn = tonumber(redis.call('HGET', head_key, 'turn') or '0')
record_revision(head_key, history_key, metadata_key, metadata_log_key, rev, redis.call('LLEN', messages_key), turn)
if #spec.m > 0 then
  redis.call('RPUSH', metadata_log_key, cjson.encode({ r = rev, m = spec.m }))
  redis.call('HINCRBY', head_key, 'mlb', patch_bytes)
end
if #spec.r == 2 and fence_matches(read_lease(lease_key), spec.r[1], spec.r[2]) then
  redis.call('DEL', lease_key)
end
if spec.te and #spec.te == 3 then
  local usage = {
    inputTokens = spec.u[1], outputTokens = spec.u[2], cacheReadTokens = spec.u[3],
    cacheWriteTokens = spec.u[4], reasoningTokens = spec.u[5],
  }
  write_turn(turns, spec.te[1], spec.te[2], now_ms(), { usage = usage, outcome = spec.te[3] })
end
local folded = nil
if spec.w and #spec.w > 0 then
  local now = now_ms()
  for _, event in ipairs(spec.w) do write_outbox_row(webhook_outbox_key, event[1], event[2], '', now) end
  -- The hint is written with the row, and this replica's deliverer takes the due rows with the
  -- tenant's endpoints version read in the same step (its cache is used only when unchanged).
  local wf = spec.wf
  if wf and #wf == 6 and outbox_due_key then
    expect_outbox(outbox_due_key, wf[3], wf[1], wf[2])
    if wf[4] ~= '' then
      folded = claim_outbox_rows(webhook_outbox_key, wf[4], now, now + wf[5], wf[6])
      table.insert(folded, 1, tonumber(redis.call('GET', endpoints_version_key) or '0'))
    end
  end
end
-- The tenant's charges (ADR 0038): what the separate steps would write, after the commit's own.
local charges = spec.tc and #spec.tc == 4 and quota_slots_key and spec.tc or nil
if charges then
  if charges[1] ~= '' then redis.call('ZREM', quota_slots_key, charges[1]) end
  if charges[2] > 0 then
    local u = quota_usage(nil, quota_counters_key, now_ms())
    redis.call('HSET', quota_counters_key, 'kw', num(u.minute), 'kc', num(u.kmin + charges[2]), 'dw', num(u.day), 'dc', num(u.kday + charges[2]))
    redis.call('PEXPIRE', quota_counters_key, 2 * QUOTA_DAY_MS)
  end
  if charges[3] ~= '' and charges[4] > 0 then
    redis.call('HINCRBY', tenant_spend_key, charges[3], num(charges[4]))
  end
end
if not announce then
  if folded then return { R.OK, rev, 0, 0, folded } end
  return { R.OK, rev }
end
-- The announcement follows every write of the commit, so a release comes after it (a vacant
-- lease means the last turn was announced, ADR 0006) and sees the claims this commit settled.
-- The turn's held events (ADR 0040) go just before its completion, numbered as appendEvents would.
local seq = 0
for _, held in ipairs(announce[9] or {}) do
  seq = redis.call('INCR', event_seq_key)
  redis.call('XADD', events_key, 'MAXLEN', announce[5], num(seq) .. '-1', 't', announce[3], 'e', held)
end
seq = redis.call('INCR', event_seq_key)
redis.call('XADD', events_key, 'MAXLEN', announce[5], num(seq) .. '-1', 't', announce[3], 'e', announce[4])
-- The announced turn is over: its cancel request and stored answers go, and the running-turn
-- marker too while it is still this turn's (unlistenTurn's step, which its listener then skips).
redis.call('DEL', cancel_key, answers_key)
if redis.call('GET', running_key) == announce[3] then redis.call('DEL', running_key) end
close_tool_calls(tool_calls_key, {}, announce[8])
local released = 0
if announce[6] and not waits_for_holder(head_key, inputs_key, input_index_key, work_index_key, parked_turn_key) then
  redis.call('DEL', lease_key)
  if ready_index_key then redis.call('ZREM', ready_index_key, announce[7]) end
  released = 1
end
if folded then return { R.OK, rev, seq, released, folded } end
return { R.OK, rev, seq, released }
