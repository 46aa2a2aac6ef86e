-- completeScheduleFire: settles a live claim named by its token and occurrence: appends the run
-- (keeping the newest ARGV[7]), advances the regular timing unless an update came since the
-- claim (or clears the run-now request), pauses on a refusal, and re-indexes the due time.
-- KEYS[1] schedule hash, KEYS[2] due index, KEYS[3] runs list
-- ARGV[1] claim token, ARGV[2] occurrence, ARGV[3] revision at the claim,
-- ARGV[4] next occurrence ('' for none), ARGV[5] run JSON ('' for a skipped occurrence),
-- ARGV[6] pause: '1' to pause, ARGV[7] runs kept, ARGV[8] pause reason, ARGV[9] due-index member
-- Replies: {R.OK}; {R.NOT_HELD} the claim lapsed or is another's (nothing changed)
local now = now_ms()
local claim = sched_live_claim(KEYS[1], now)
if not claim or claim.tok ~= ARGV[1] or claim.at ~= ARGV[2] then return { R.NOT_HELD } end
redis.call('HSET', KEYS[1], 'ctok', '', 'cat', '', 'cexp', 0, 'crn', '')
if claim.rn == '1' then
  redis.call('HSET', KEYS[1], 'runnow', '')
elseif redis.call('HGET', KEYS[1], 'rev') == ARGV[3] then
  redis.call('HSET', KEYS[1], 'next', ARGV[4])
end
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], 'last', ARGV[2])
  redis.call('LPUSH', KEYS[3], ARGV[5])
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[7]) - 1)
end
if ARGV[6] == '1' then redis.call('HSET', KEYS[1], 'paused', 1, 'reason', ARGV[8]) end
sched_reindex(KEYS[1], KEYS[2], ARGV[9], now)
return { R.OK }
