-- readTurn: one turn record of the session (lua/_turns.lua).
-- KEYS[1] turn records hash
-- ARGV[1] turn id
-- Replies: {R.OK, recordJson}
--          {R.NONE}   no record of that turn

local records_key = KEYS[1]
local turn_id = ARGV[1]

local raw = redis.call('HGET', records_key, turn_id)
if not raw then return { R.NONE } end
return { R.OK, raw }
