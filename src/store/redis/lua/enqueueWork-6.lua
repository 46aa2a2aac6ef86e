-- enqueueWork: store a new ready batch with the next enqueue sequence, or answer a source key
-- seen before (same content: the existing batch; other content: a conflict). A stored batch for
-- a session without a commit creates the session (head revision 1, as CreateSession leaves it):
-- a session exists from its first acknowledged input (ADR 0003).
-- KEYS[1] work hash (batch id -> JSON)   KEYS[2] work payload hash   KEYS[3] work index zset
-- KEYS[4] work source-key hash           KEYS[5] sequence hash       KEYS[6] head hash
-- ARGV[1] batch id   ARGV[2] source key ("" for none)   ARGV[3] content hash
-- ARGV[4] work class   ARGV[5] delivery policy   ARGV[6] slot policy   ARGV[7] merge key
-- ARGV[8] payload
-- Replies: {R.OK, enqueueSeq, created}    stored; created is 1 when this batch created the
--                                         session; the caller knows every other field
--          {R.DEDUPLICATED, batchJson}    the source key's batch, unchanged (same payload)
--          {R.SOURCE_KEY_CONFLICT}
local source_key = ARGV[2]
local seen = source_key_reply(KEYS[1], KEYS[4], source_key, ARGV[3])
if seen then return seen end
local seq = redis.call('HINCRBY', KEYS[5], 'work', 1)
local batch = {
  batchId = ARGV[1], enqueueSeq = seq, workClass = ARGV[4], deliveryPolicy = ARGV[5],
  slotPolicy = ARGV[6], mergeKey = ARGV[7], sourceKey = source_key, state = 'ready',
  claimFencingToken = 0, claimId = '',
}
local keys = { items = KEYS[1], payloads = KEYS[2], index = KEYS[3], source_keys = KEYS[4], head = KEYS[6] }
local created = store_new_item(keys, ARGV[1], seq, batch, ARGV[8], source_key, ARGV[3])
return { R.OK, seq, created }
