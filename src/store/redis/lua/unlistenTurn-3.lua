-- unlistenTurn: a turn's listener stops (signals.ts, not a store operation): its cancel key and
-- stored results go, and the running-turn marker too unless a later turn of the session marked
-- itself since (a next turn may start on this replica before the last one's listener stopped).
-- KEYS[1] active turn key   KEYS[2] the turn's cancel key   KEYS[3] the turn's tool results hash
-- ARGV[1] turn id
-- Replies: {R.OK, 1 when the marker was this turn's and went else 0}
redis.call('DEL', KEYS[2], KEYS[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return { R.OK, 1 }
end
return { R.OK, 0 }
