-- cancelParkedTurn: ask the session's parked turn to end (any replica); its next resume ends it.
-- KEYS[1] parked turn hash
-- ARGV[1] turn id ("" for whichever turn is parked)
-- Replies: {R.OK}     the parked turn will end
--          {R.NONE}   no parked turn (of that id)

local parked_turn_key = KEYS[1]
local turn_id = ARGV[1]

local parked = redis.call('HGET', parked_turn_key, 'turn')
if not parked or (turn_id ~= '' and parked ~= turn_id) then return { R.NONE } end
redis.call('HSET', parked_turn_key, 'cxl', '1')
return { R.OK }
