-- startTurn: a turn start on an idle session in one step (ADR 0023). submitInput's step; then,
-- when the session is vacant (no lease hash: never held, or released; no parked turn), the
-- lease acquired as claimLease does, the idle input claim of claimInputs under it, and the
-- committed state as loadSession reads it. Otherwise only the submit happens. Either way the
-- reply says where the session's event log ends.
-- KEYS[1] input hash   KEYS[2] input payload hash   KEYS[3] input index zset
-- KEYS[4] input source-key hash   KEYS[5] sequence hash   KEYS[6] head hash   KEYS[7] lease hash
-- KEYS[8] parked turn hash   KEYS[9] lease generation counter   KEYS[10] message list
-- KEYS[11] metadata hash   KEYS[12] the event log's sequence counter (event-log.ts)
-- KEYS[13] the running-turn marker (signals.ts)
-- KEYS[14] turn records hash   KEYS[15] turn order zset (lua/_turns.lua: the idle claim of one
--          input records its turn in_progress, as claimInputs does)
-- KEYS[16] the ready index, on a standalone Redis only (ADR 0024): the session is marked ready in
--          this step, as ReadyIndex.markReady would (ZADD LT); absent on Cluster, where the index
--          lives in another slot and the runtime marks it with its own command
-- ---- The tenant's limits in the step (ADR 0038): only on a standalone or Sentinel Redis
-- ---- (KEYS[16] is then the ready index); never on Cluster (the tenant's own slots).
-- KEYS[17] the tenant's spend hash (chargeTenantSpend-1.lua), read when the lease is taken
-- KEYS[18] the tenant's quota slots zset   KEYS[19] the tenant's quota counters hash (_quota.lua)
-- ARGV[1] input id   ARGV[2] source key ("" for none)   ARGV[3] content hash
-- ARGV[4] delivery JSON   ARGV[5] payload   ARGV[6] owner JSON   ARGV[7] owner id
-- ARGV[8] incarnation id   ARGV[9] lease token   ARGV[10] ttl in ms   ARGV[11] max inputs
-- ARGV[12] claim id   ARGV[13] mark epoch ("" for no mark)   ARGV[14] mark message count
-- ARGV[15] the ready mark's score (the replica's clock, as every writer of the index uses)
-- ARGV[16] session id (the ready index's member)
-- ARGV[17] the turn id a claim of just this input makes ("" for none): when the claim takes
--          exactly the input this step stored, that turn is marked running for the ttl, as
--          listenTurn marks it (ADR 0024; nothing can be stored for a turn not yet marked)
-- ARGV[18] the submitter's traceparent ("" for none), as submitInput's ARGV[6]
-- ARGV[19] the input's turn id ("" for none), as submitInput's ARGV[7]
-- ARGV[20] "1": only a session with a commit (TurnStartClaim.committedOnly, ADR 0029); else ""
-- ARGV[21] the spend window read from KEYS[17] ("" or absent: no read)
-- ARGV[22] the admission as admitTurn takes it ("" or absent: none): JSON [slot ttl ms,
--          concurrent_turns max, turns_per_minute max, tokens_per_minute max, tokens_per_day
--          max]; the holder is "<session id>/<ARGV[19]>", the turn a claim of just this input
--          makes. Checked after the submit and before the lease: refused, the step takes no
--          lease and claims nothing (as on a session that is not vacant); admitted, and the claim
--          took exactly this input, the slot is taken as admitTurn takes it
-- Replies: {R.NONE} ARGV[20] is "1" and the session has no commit (nothing changed)
--          {R.SOURCE_KEY_CONFLICT}
--          {R.OK, submitted, lease, claimed, state, logEnd}: submitted is submitInput's reply; lease is {}
--          when the session was not vacant (nothing else happened), else claimLease's reply
--          {R.OK, tok, gen, exp, ownerJson, 0, 1}; claimed is claimInputs' reply ({R.NONE}
--          or {R.OK, inputJson1, payload1, ...}); state is loadSession's reply; logEnd the
--          log's last sequence number (0 before its first entry); then 1 when the turn was
--          marked running (ARGV[17]) else 0; then, with KEYS[17] and ARGV[21], the tenant's spend
--          in that window as chargeTenantSpend with 0 answers it, else -1; then the admission:
--          {} none in the step, {1} admitted (the slot held), {0, limit name, ms until it may
--          free (at least 1)} refused (and lease, claimed, state are {})
--- @include "claims"
--- @include "clock"
--- @include "inputs"
--- @include "lease-grant"
--- @include "lease"
--- @include "quota"
--- @include "session"
--- @include "submit"
--- @include "turns"

local inputs_key = KEYS[1]
local input_payloads_key = KEYS[2]
local input_index_key = KEYS[3]
local input_sources_key = KEYS[4]
local seq_key = KEYS[5]
local head_key = KEYS[6]
local lease_key = KEYS[7]
local parked_turn_key = KEYS[8]
local gen_key = KEYS[9]
local messages_key = KEYS[10]
local metadata_key = KEYS[11]
local event_seq_key = KEYS[12]
local running_key = KEYS[13]
local turn_records_key = KEYS[14]
local turn_order_key = KEYS[15]
local ready_index_key = KEYS[16]
local input_id = ARGV[1]
local source_key = ARGV[2]
local content_hash = ARGV[3]
local delivery_json = ARGV[4]
local payload = ARGV[5]
local owner_json = ARGV[6]
local owner_id = ARGV[7]
local incarnation_id = ARGV[8]
local lease_token = ARGV[9]
local ttl_ms = ARGV[10]
local max_inputs = ARGV[11]
local claim_id = ARGV[12]
local mark_epoch = ARGV[13]
local mark_message_count = ARGV[14]
local ready_score = ARGV[15]
local session_id = ARGV[16]
local claimed_turn_id = ARGV[17]
local submitter_traceparent = ARGV[18]
local input_turn_id = ARGV[19]
local committed_only = ARGV[20]
local tenant_spend_key = KEYS[17]
local spend_window = ARGV[21]
local quota_slots_key = KEYS[18]
local quota_counters_key = KEYS[19]
local admission_json = ARGV[22]
local turns = { records = turn_records_key, order = turn_order_key }

if committed_only == '1' and redis.call('EXISTS', head_key) == 0 then return { R.NONE } end
local now = now_ms()
local log_end = tonumber(redis.call('GET', event_seq_key) or '0')
local submit_keys = { inputs_key, input_payloads_key, input_index_key, input_sources_key, seq_key, head_key, lease_key, parked_turn_key }
local submitted = submit_input(submit_keys, { input_id, source_key, content_hash, delivery_json, payload, submitter_traceparent, input_turn_id }, now)
if submitted[1] == R.SOURCE_KEY_CONFLICT then return submitted end
if ready_index_key then redis.call('ZADD', ready_index_key, 'LT', ready_score, session_id) end
if redis.call('EXISTS', lease_key) == 1 or redis.call('EXISTS', parked_turn_key) == 1 then
  return { R.OK, submitted, {}, {}, {}, log_end, 0, -1, {} }
end
-- The admission's checks come before the lease's writes: refused, nothing more is written.
local admission, holder, verdict, usage = nil, nil, nil, nil
if quota_slots_key and admission_json and admission_json ~= '' then
  admission = cjson.decode(admission_json)
  holder = session_id .. '/' .. input_turn_id
  verdict, usage = quota_admission(quota_slots_key, quota_counters_key, holder, now, admission[2], admission[3], admission[4], admission[5])
  if type(verdict) == 'table' then
    return { R.OK, submitted, {}, {}, {}, log_end, 0, -1, { 0, verdict[1], math.max(1, verdict[2]) } }
  end
end
local lease = acquire_lease(lease_key, gen_key, owner_json, owner_id, incarnation_id, lease_token, now, now + tonumber(ttl_ms))
local leased = lease_reply(R.OK, lease, false)
leased[7] = 1
local taken = take_open_inputs(inputs_key, input_index_key, head_key, lease.gen, tonumber(max_inputs),
  function(d) return d.kind == 'next_turn' end)
local claimed = { R.NONE }
if #taken > 0 then
  claimed = append_claimed({ R.OK }, inputs_key, input_payloads_key, taken, 'inputId', lease.gen, claim_id)
  start_claimed_turn(turns, taken, now)
end
local marked = 0
if claimed_turn_id ~= '' and #taken == 1 and taken[1].inputId == input_id then
  redis.call('SET', running_key, claimed_turn_id, 'PX', ttl_ms)
  marked = 1
end
local state = session_state(head_key, messages_key, metadata_key, mark_epoch, tonumber(mark_message_count))
local spent = -1
if tenant_spend_key and spend_window and spend_window ~= '' then
  spent = tonumber(redis.call('HGET', tenant_spend_key, spend_window) or '0')
end
-- The slot is this input's turn's: taken only when the claim took exactly this input.
local admitted = {}
if admission and #taken == 1 and taken[1].inputId == input_id then
  quota_take_slot(quota_slots_key, quota_counters_key, holder, admission[1], now, verdict, usage)
  admitted = { 1 }
end
return { R.OK, submitted, leased, claimed, state, log_end, marked, spent, admitted }
