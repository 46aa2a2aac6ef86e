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
-- Replies: {R.OK, seq, created, busy}       stored; created is 1 when this input created the
--                                           session; busy is 1 when a turn holds it; the
--                                           caller knows every other field
--          {R.DEDUPLICATED, inputJson, busy} the source key's input as it is now (same payload)
--          {R.SOURCE_KEY_CONFLICT}
local keys = { KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8] }
return submit_input(keys, { ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6] }, now_ms())
