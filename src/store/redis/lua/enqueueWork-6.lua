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
--- @include "items"

local work_key = KEYS[1]
local work_payloads_key = KEYS[2]
local work_index_key = KEYS[3]
local work_sources_key = KEYS[4]
local seq_key = KEYS[5]
local head_key = KEYS[6]
local batch_id = ARGV[1]
local source_key = ARGV[2]
local content_hash = ARGV[3]
local work_class = ARGV[4]
local delivery_policy = ARGV[5]
local slot_policy = ARGV[6]
local merge_key = ARGV[7]
local payload = ARGV[8]

local seen = source_key_reply(work_key, work_sources_key, source_key, content_hash)
if seen then return seen end
local seq = redis.call('HINCRBY', seq_key, 'work', 1)
local batch = {
  batchId = batch_id, enqueueSeq = seq, workClass = work_class, deliveryPolicy = delivery_policy,
  slotPolicy = slot_policy, mergeKey = merge_key, sourceKey = source_key, state = 'ready',
  claimFencingToken = 0, claimId = '',
}
local keys = { items = work_key, payloads = work_payloads_key, index = work_index_key, source_keys = work_sources_key, head = head_key }
local created = store_new_item(keys, batch_id, seq, batch, payload, source_key, content_hash)
return { R.OK, seq, created }
