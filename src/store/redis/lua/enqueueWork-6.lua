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
if source_key ~= '' then
  local seen = redis.call('HGET', KEYS[4], source_key)
  if seen then
    local sep = string.find(seen, ':', 1, true)
    if string.sub(seen, 1, sep - 1) ~= ARGV[3] then return { R.SOURCE_KEY_CONFLICT } end
    local existing = redis.call('HGET', KEYS[1], string.sub(seen, sep + 1))
    if existing then return { R.DEDUPLICATED, existing } end
  end
end
local seq = redis.call('HINCRBY', KEYS[5], 'work', 1)
local batch = {
  batchId = ARGV[1], enqueueSeq = seq, workClass = ARGV[4], deliveryPolicy = ARGV[5],
  slotPolicy = ARGV[6], mergeKey = ARGV[7], sourceKey = source_key, state = 'ready',
  claimFencingToken = 0, claimId = '',
}
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(batch))
redis.call('HSET', KEYS[2], ARGV[1], ARGV[8])
redis.call('ZADD', KEYS[3], seq, ARGV[1])
if source_key ~= '' then redis.call('HSET', KEYS[4], source_key, ARGV[3] .. ':' .. ARGV[1]) end
local created = redis.call('HSETNX', KEYS[6], 'rev', 1)
return { R.OK, seq, created }
