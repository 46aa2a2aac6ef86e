-- readParkedTurn: the session's parked turn, if any.
-- KEYS[1] parked turn hash
-- Replies: {R.OK, field1, value1, ...}   see parkTurn for the fields
--          {R.NONE}

local parked_turn_key = KEYS[1]

local fields = redis.call('HGETALL', parked_turn_key)
if #fields == 0 then return { R.NONE } end
local reply = { R.OK }
for i = 1, #fields do reply[#reply + 1] = fields[i] end
return reply
