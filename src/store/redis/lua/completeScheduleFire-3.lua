-- completeScheduleFire: settles a live claim named by its token and occurrence: appends the run
-- (keeping the newest ARGV[7]), advances the regular timing unless an update came since the
-- claim (or clears the run-now request), pauses on a refusal, and re-indexes the due time.
-- KEYS[1] schedule hash, KEYS[2] due index, KEYS[3] runs list
-- ARGV[1] claim token, ARGV[2] occurrence, ARGV[3] revision at the claim,
-- ARGV[4] next occurrence ('' for none), ARGV[5] run JSON ('' for a skipped occurrence),
-- ARGV[6] pause: '1' to pause, ARGV[7] runs kept, ARGV[8] pause reason, ARGV[9] due-index member
-- Replies: {R.OK}; {R.NOT_HELD} the claim lapsed or is another's (nothing changed)
--- @include "clock"
--- @include "schedule"

local schedule_key = KEYS[1]
local due_index_key = KEYS[2]
local runs_key = KEYS[3]
local claim_token = ARGV[1]
local occurrence = ARGV[2]
local revision_at_claim = ARGV[3]
local next_occurrence = ARGV[4]
local run_json = ARGV[5]
local pause = ARGV[6]
local runs_kept = ARGV[7]
local pause_reason = ARGV[8]
local due_index_member = ARGV[9]

local now = now_ms()
local claim = sched_live_claim(schedule_key, now)
if not claim or claim.tok ~= claim_token or claim.at ~= occurrence then return { R.NOT_HELD } end
redis.call('HSET', schedule_key, 'ctok', '', 'cat', '', 'cexp', 0, 'crn', '')
if claim.rn == '1' then
  redis.call('HSET', schedule_key, 'runnow', '')
elseif redis.call('HGET', schedule_key, 'rev') == revision_at_claim then
  redis.call('HSET', schedule_key, 'next', next_occurrence)
end
if run_json ~= '' then
  redis.call('HSET', schedule_key, 'last', occurrence)
  redis.call('LPUSH', runs_key, run_json)
  redis.call('LTRIM', runs_key, 0, tonumber(runs_kept) - 1)
end
if pause == '1' then redis.call('HSET', schedule_key, 'paused', 1, 'reason', pause_reason) end
sched_reindex(schedule_key, due_index_key, due_index_member, now)
return { R.OK }
