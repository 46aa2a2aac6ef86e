-- unlistenTurn: a turn's listener stops (signals.ts, not a store operation): its cancel key and
-- stored results go, and the running-turn marker too unless a later turn of the session marked
-- itself since (a next turn may start on this replica before the last one's listener stopped).
-- KEYS[1] active turn key   KEYS[2] the turn's cancel key   KEYS[3] the turn's tool results hash
-- ARGV[1] turn id
-- Replies: {R.OK, 1 when the marker was this turn's and went else 0}

local active_turn_key = KEYS[1]
local cancel_key = KEYS[2]
local answers_key = KEYS[3]
local turn_id = ARGV[1]

redis.call('DEL', cancel_key, answers_key)
if redis.call('GET', active_turn_key) == turn_id then
  redis.call('DEL', active_turn_key)
  return { R.OK, 1 }
end
return { R.OK, 0 }
