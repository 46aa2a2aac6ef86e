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
-- ---- The tenant's spend read in the step (ADR 0038): only on a standalone or Sentinel Redis
-- ---- (KEYS[16] is then the ready index); never on Cluster (the tenant's own slot).
-- KEYS[17] the tenant's spend hash (chargeTenantSpend-1.lua), read when the lease is taken
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
-- Replies: {R.NONE} ARGV[20] is "1" and the session has no commit (nothing changed)
--          {R.SOURCE_KEY_CONFLICT}
--          {R.OK, submitted, lease, claimed, state, logEnd}: submitted is submitInput's reply; lease is {}
--          when the session was not vacant (nothing else happened), else claimLease's reply
--          {R.OK, tok, gen, exp, ownerJson, 0, 1}; claimed is claimInputs' reply ({R.NONE}
--          or {R.OK, inputJson1, payload1, ...}); state is loadSession's reply; logEnd the
--          log's last sequence number (0 before its first entry); then 1 when the turn was
--          marked running (ARGV[17]) else 0; then, with KEYS[17] and ARGV[21], the tenant's spend
--          in that window as chargeTenantSpend with 0 answers it (ADR 0038)
--- @include "claims"
--- @include "clock"
--- @include "inputs"
--- @include "lease-grant"
--- @include "lease"
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
local turns = { records = turn_records_key, order = turn_order_key }

if committed_only == '1' and redis.call('EXISTS', head_key) == 0 then return { R.NONE } end
local now = now_ms()
local log_end = tonumber(redis.call('GET', event_seq_key) or '0')
local submit_keys = { inputs_key, input_payloads_key, input_index_key, input_sources_key, seq_key, head_key, lease_key, parked_turn_key }
local submitted = submit_input(submit_keys, { input_id, source_key, content_hash, delivery_json, payload, submitter_traceparent, input_turn_id }, now)
if submitted[1] == R.SOURCE_KEY_CONFLICT then return submitted end
if ready_index_key then redis.call('ZADD', ready_index_key, 'LT', ready_score, session_id) end
if redis.call('EXISTS', lease_key) == 1 or redis.call('EXISTS', parked_turn_key) == 1 then
  return { R.OK, submitted, {}, {}, {}, log_end, 0 }
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
if tenant_spend_key and spend_window and spend_window ~= '' then
  local spent = tonumber(redis.call('HGET', tenant_spend_key, spend_window) or '0')
  return { R.OK, submitted, leased, claimed, state, log_end, marked, spent }
end
return { R.OK, submitted, leased, claimed, state, log_end, marked }
