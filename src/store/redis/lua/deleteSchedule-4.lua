-- deleteSchedule: removes a schedule, its runs and its index entries.
-- KEYS[1] schedule hash, KEYS[2] the tenant's schedule index, KEYS[3] due index, KEYS[4] runs list
-- ARGV[1] schedule id, ARGV[2] due-index member
-- Replies: {R.OK, 1 deleted | 0 there was none}
local existed = redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[4])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
return { R.OK, existed }
