-- forkSession: creates the target of a fork from what the source's readRevision returned. The
-- source's revisions never change once committed, so reading them and writing the copy need
-- not be one step (on Redis Cluster the two sessions live in different slots); this script is
-- the target's one step: it checks the target is unused, then writes its head (the source's
-- revision, where its history starts), transcript, metadata and first history entries.
-- KEYS[1] head hash   KEYS[2] message list   KEYS[3] metadata hash   KEYS[4] history list
-- KEYS[5] metadata log   KEYS[6] work index zset   KEYS[7] input index zset
-- ARGV[1] revision   ARGV[2] turn index   ARGV[3] metadata JSON [key, value, ...]
-- ARGV[4..] messages
-- Replies: {R.OK, headRevision}   {R.EXISTS}
--- @include "chunked"
--- @include "epoch"
--- @include "num"

local head_key = KEYS[1]
local messages_key = KEYS[2]
local metadata_key = KEYS[3]
local history_key = KEYS[4]
local metadata_log_key = KEYS[5]
local work_index_key = KEYS[6]
local input_index_key = KEYS[7]
local revision = ARGV[1]
local turn_index = ARGV[2]
local metadata_json = ARGV[3]

if redis.call('EXISTS', head_key) == 1 or redis.call('ZCARD', work_index_key) > 0
    or redis.call('ZCARD', input_index_key) > 0 then
  return { R.EXISTS }
end
local rev = tonumber(revision)
redis.call('HSET', head_key, 'rev', rev, 'turn', turn_index, 'hf', rev)
new_epoch(head_key, rev)
redis.call('DEL', messages_key, metadata_key, history_key, metadata_log_key)
local messages = {}
for i = 4, #ARGV do messages[#messages + 1] = ARGV[i] end
rpush_all(messages_key, messages)
local metadata = cjson.decode(metadata_json)
if #metadata > 0 then redis.call('HSET', metadata_key, unpack(metadata)) end
redis.call('RPUSH', metadata_log_key, cjson.encode({ r = rev, m = metadata }))
-- The metadata history's bytes (ADR 0029, as commit counts them): this first entry's.
local logged = 0
for n = 1, #metadata do logged = logged + #metadata[n] end
redis.call('HSET', head_key, 'mlb', logged)
redis.call('RPUSH', history_key, num(#messages) .. ':' .. turn_index)
return { R.OK, rev }
