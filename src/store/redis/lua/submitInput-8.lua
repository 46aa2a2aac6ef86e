-- submitInput: store a new pending turn input with the next sequence, or answer a source key
-- seen before (same content: the existing input; other content: a conflict). A stored input for
-- a session without a commit creates the session (head revision 1, as CreateSession leaves it):
-- a session exists from its first acknowledged input (ADR 0003).
-- The reply also says whether a turn holds the session (a live lease, or a parked turn).
-- KEYS[1] input hash (input id -> JSON)   KEYS[2] input payload hash   KEYS[3] input index zset
-- KEYS[4] input source-key hash           KEYS[5] sequence hash        KEYS[6] head hash
-- KEYS[7] lease hash                      KEYS[8] parked turn hash
-- ARGV[1] input id   ARGV[2] source key ("" for none)   ARGV[3] content hash
-- ARGV[4] delivery JSON   ARGV[5] payload   ARGV[6] the submitter's traceparent ("" for none;
--         kept in the input JSON, not part of the content hash)
-- ARGV[7] the id of the turn a claim of just this input makes (ports/turn-ids.ts; "" for none):
--         kept in the input JSON as `tid`, so the idle claim that takes it alone records that
--         turn (lua/_turns.lua)
-- ARGV[8] the session's signal channel: a new steer (an active_turn delivery) is published
--         there as {type = "steer", turnId} in this step, so the turn's listener hears of it
--         (signals.ts, ADR 0041)
-- Replies: {R.OK, seq, created, busy}       stored; created is 1 when this input created the
--                                           session; busy is 1 when a turn holds it; the
--                                           caller knows every other field
--          {R.DEDUPLICATED, inputJson, busy} the source key's input as it is now (same payload)
--          {R.SOURCE_KEY_CONFLICT}
--- @include "clock"
--- @include "submit"

local inputs_key = KEYS[1]
local input_payloads_key = KEYS[2]
local input_index_key = KEYS[3]
local input_sources_key = KEYS[4]
local seq_key = KEYS[5]
local head_key = KEYS[6]
local lease_key = KEYS[7]
local parked_turn_key = KEYS[8]
local input_id = ARGV[1]
local source_key = ARGV[2]
local content_hash = ARGV[3]
local delivery_json = ARGV[4]
local payload = ARGV[5]
local submitter_traceparent = ARGV[6]
local input_turn_id = ARGV[7]
local signal_channel = ARGV[8]

local keys = { inputs_key, input_payloads_key, input_index_key, input_sources_key, seq_key, head_key, lease_key, parked_turn_key }
local reply = submit_input(keys, { input_id, source_key, content_hash, delivery_json, payload, submitter_traceparent, input_turn_id }, now_ms())
if reply[1] == R.OK then
  local delivery = cjson.decode(delivery_json)
  if delivery.kind == 'active_turn' then
    redis.call('PUBLISH', signal_channel, cjson.encode({ type = 'steer', turnId = delivery.turnId }))
  end
end
return reply
