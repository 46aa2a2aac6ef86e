-- Included as "submit": submitInput's step, which startTurn takes first. Reads no KEYS or ARGV
-- (ADR 0035).
--- @include "lease"
--- @include "items"

-- submitInput's step, also the first part of startTurn's: the input stored with the next
-- sequence, or the source key's earlier input answered. k and a are the first 8 keys and 7
-- arguments, which both scripts name alike (submitInput-8.lua's header lists them; startTurn
-- passes its ARGV[18] as the sixth, the submitter's traceparent, and its ARGV[19] as the
-- seventh, the input's turn id).
-- {R.OK, seq, created, busy}, {R.DEDUPLICATED, inputJson, busy} or {R.SOURCE_KEY_CONFLICT}
local function submit_input(k, a, now)
  local busy = 0
  if live_lease(k[7], now) or redis.call('EXISTS', k[8]) == 1 then busy = 1 end
  local seen = source_key_reply(k[1], k[4], a[2], a[3])
  if seen then
    if seen[1] == R.DEDUPLICATED then seen[3] = busy end
    return seen
  end
  local seq = redis.call('HINCRBY', k[5], 'input', 1)
  local input = {
    inputId = a[1], seq = seq, delivery = cjson.decode(a[4]), sourceKey = a[2],
    state = 'pending', claimFencingToken = 0, claimId = '', deferred = false,
  }
  -- The submitter's traceparent rides in the record, outside the content hash (a[3]).
  if a[6] and a[6] ~= '' then input.trace = a[6] end
  -- The turn an idle claim of just this input starts (lua/_turns.lua names its record so).
  if a[7] and a[7] ~= '' then input.tid = a[7] end
  local keys = { items = k[1], payloads = k[2], index = k[3], source_keys = k[4], head = k[6] }
  local created = store_new_item(keys, a[1], seq, input, a[5], a[2], a[3])
  return { R.OK, seq, created, busy }
end
