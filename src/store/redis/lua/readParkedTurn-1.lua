-- readParkedTurn: the session's parked turn, if any.
-- KEYS[1] parked turn hash
-- Replies: {R.OK, field1, value1, ...}   see parkTurn for the fields
--          {R.NONE}
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return { R.NONE } end
local reply = { R.OK }
for i = 1, #fields do reply[#reply + 1] = fields[i] end
return reply
