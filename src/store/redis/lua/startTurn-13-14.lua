-- startTurn: a turn start on an idle session in one step (ADR 0023). submitInput's step; then,
-- when the session is vacant (no lease hash: never held, or released; no parked turn), the
-- lease acquired as claimLease does, the idle input claim of claimInputs under it, and the
-- committed state as loadSession reads it. Otherwise only the submit happens. Either way the
-- reply says where the session's event log ends.
-- KEYS[1] input hash   KEYS[2] input payload hash   KEYS[3] input index zset
-- KEYS[4] input source-key hash   KEYS[5] sequence hash   KEYS[6] head hash   KEYS[7] lease hash
-- KEYS[8] parked turn hash   KEYS[9] lease generation counter   KEYS[10] message list
-- KEYS[11] metadata hash   KEYS[12] the event log's sequence counter (event-log.ts)
-- KEYS[13] the running-turn marker (signals.ts)
-- KEYS[14] the ready index, on a standalone Redis only (ADR 0024): the session is marked ready in
--          this step, as ReadyIndex.markReady would (ZADD LT); absent on Cluster, where the index
--          lives in another slot and the runtime marks it with its own command
-- ARGV[1] input id   ARGV[2] source key ("" for none)   ARGV[3] content hash
-- ARGV[4] delivery JSON   ARGV[5] payload   ARGV[6] owner JSON   ARGV[7] owner id
-- ARGV[8] incarnation id   ARGV[9] lease token   ARGV[10] ttl in ms   ARGV[11] max inputs
-- ARGV[12] claim id   ARGV[13] mark epoch ("" for no mark)   ARGV[14] mark message count
-- ARGV[15] the ready mark's score (the replica's clock, as every writer of the index uses)
-- ARGV[16] session id (the ready index's member)
-- ARGV[17] the turn id a claim of just this input makes ("" for none): when the claim takes
--          exactly the input this step stored, that turn is marked running for the ttl, as
--          listenTurn marks it (ADR 0024; nothing can be stored for a turn not yet marked)
-- ARGV[18] the submitter's traceparent ("" for none), as submitInput's ARGV[6]
-- Replies: {R.SOURCE_KEY_CONFLICT}
--          {R.OK, submitted, lease, claimed, state, logEnd}: submitted is submitInput's reply; lease is {}
--          when the session was not vacant (nothing else happened), else claimLease's reply
--          {R.OK, tok, gen, exp, ownerJson, 0, 1}; claimed is claimInputs' reply ({R.NONE}
--          or {R.OK, inputJson1, payload1, ...}); state is loadSession's reply; logEnd the
--          log's last sequence number (0 before its first entry); then 1 when the turn was
--          marked running (ARGV[17]) else 0
local now = now_ms()
local log_end = tonumber(redis.call('GET', KEYS[12]) or '0')
local submit_keys = { KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8] }
local submitted = submit_input(submit_keys, { ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[18] }, now)
if submitted[1] == R.SOURCE_KEY_CONFLICT then return submitted end
if KEYS[14] then redis.call('ZADD', KEYS[14], 'LT', ARGV[15], ARGV[16]) end
if redis.call('EXISTS', KEYS[7]) == 1 or redis.call('EXISTS', KEYS[8]) == 1 then
  return { R.OK, submitted, {}, {}, {}, log_end, 0 }
end
local lease = acquire_lease(KEYS[7], KEYS[9], ARGV[6], ARGV[7], ARGV[8], ARGV[9], now, now + tonumber(ARGV[10]))
local leased = lease_reply(R.OK, lease, false)
leased[7] = 1
local taken = take_open_inputs(KEYS[1], KEYS[3], KEYS[6], lease.gen, tonumber(ARGV[11]),
  function(d) return d.kind == 'next_turn' end)
local claimed = { R.NONE }
if #taken > 0 then
  claimed = append_claimed({ R.OK }, KEYS[1], KEYS[2], taken, 'inputId', lease.gen, ARGV[12])
end
local marked = 0
if ARGV[17] ~= '' and #taken == 1 and taken[1].inputId == ARGV[1] then
  redis.call('SET', KEYS[13], ARGV[17], 'PX', ARGV[10])
  marked = 1
end
local state = session_state(KEYS[6], KEYS[10], KEYS[11], ARGV[13], tonumber(ARGV[14]))
return { R.OK, submitted, leased, claimed, state, log_end, marked }
