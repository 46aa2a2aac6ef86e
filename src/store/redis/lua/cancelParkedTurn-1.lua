-- cancelParkedTurn: ask the session's parked turn to end (any replica); its next resume ends it.
-- KEYS[1] parked turn hash
-- ARGV[1] turn id ("" for whichever turn is parked)
-- Replies: {R.OK}     the parked turn will end
--          {R.NONE}   no parked turn (of that id)
local parked = redis.call('HGET', KEYS[1], 'turn')
if not parked or (ARGV[1] ~= '' and parked ~= ARGV[1]) then return { R.NONE } end
redis.call('HSET', KEYS[1], 'cxl', '1')
return { R.OK }
