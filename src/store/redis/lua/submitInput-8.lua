-- submitInput: store a new pending turn input with the next sequence, or answer a source key
-- seen before (same content: the existing input; other content: a conflict). A stored input for
-- a session without a commit creates the session (head revision 1, as CreateSession leaves it):
-- a session exists from its first acknowledged input (ADR 0003).
-- The reply also says whether a turn holds the session (a live lease, or a parked turn).
-- KEYS[1] input hash (input id -> JSON)   KEYS[2] input payload hash   KEYS[3] input index zset
-- KEYS[4] input source-key hash           KEYS[5] sequence hash        KEYS[6] head hash
-- KEYS[7] lease hash                      KEYS[8] parked turn hash
-- ARGV[1] input id   ARGV[2] source key ("" for none)   ARGV[3] content hash
-- ARGV[4] delivery JSON   ARGV[5] payload
-- Replies: {R.OK, seq, created, busy}       stored; created is 1 when this input created the
--                                           session; busy is 1 when a turn holds it; the
--                                           caller knows every other field
--          {R.DEDUPLICATED, inputJson, busy} the source key's input as it is now (same payload)
--          {R.SOURCE_KEY_CONFLICT}
local busy = 0
if live_lease(KEYS[7], now_ms()) or redis.call('EXISTS', KEYS[8]) == 1 then busy = 1 end
local source_key = ARGV[2]
local seen = source_key_reply(KEYS[1], KEYS[4], source_key, ARGV[3])
if seen then
  if seen[1] == R.DEDUPLICATED then seen[3] = busy end
  return seen
end
local seq = redis.call('HINCRBY', KEYS[5], 'input', 1)
local input = {
  inputId = ARGV[1], seq = seq, delivery = cjson.decode(ARGV[4]), sourceKey = source_key,
  state = 'pending', claimFencingToken = 0, claimId = '', deferred = false,
}
local keys = { items = KEYS[1], payloads = KEYS[2], index = KEYS[3], source_keys = KEYS[4], head = KEYS[6] }
local created = store_new_item(keys, ARGV[1], seq, input, ARGV[5], source_key, ARGV[3])
return { R.OK, seq, created, busy }
