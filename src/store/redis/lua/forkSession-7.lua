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
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('ZCARD', KEYS[6]) > 0
    or redis.call('ZCARD', KEYS[7]) > 0 then
  return { R.EXISTS }
end
local rev = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'rev', rev, 'turn', ARGV[2], 'hf', rev)
new_epoch(KEYS[1], rev)
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
local messages = {}
for i = 4, #ARGV do messages[#messages + 1] = ARGV[i] end
rpush_all(KEYS[2], messages)
local metadata = cjson.decode(ARGV[3])
if #metadata > 0 then redis.call('HSET', KEYS[3], unpack(metadata)) end
redis.call('RPUSH', KEYS[5], cjson.encode({ r = rev, m = metadata }))
-- The metadata history's bytes (ADR 0029, as commit counts them): this first entry's.
local logged = 0
for n = 1, #metadata do logged = logged + #metadata[n] end
redis.call('HSET', KEYS[1], 'mlb', logged)
redis.call('RPUSH', KEYS[4], num(#messages) .. ':' .. ARGV[2])
return { R.OK, rev }
