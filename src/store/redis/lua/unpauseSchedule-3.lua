-- unpauseSchedule: resumes a paused schedule at the next occurrence its caller computed from
-- now (missed occurrences while paused are not fired); a running schedule is left as it is.
-- With a missed run (a one-off whose instant passed while paused): recorded, and the schedule
-- resumes at ARGV[1], only when no claim is held (a claimed occurrence is its claim's to settle)
-- and the stored next occurrence is ARGV[3], due by the Redis clock; else the stored one is kept.
-- KEYS[1] schedule hash, KEYS[2] due index, KEYS[3] runs list
-- ARGV[1] next occurrence ('' for none), ARGV[2] due-index member,
-- ARGV[3] missed occurrence ('' for none), ARGV[4] missed run JSON, ARGV[5] runs kept
-- Replies: {R.OK, record...}; {R.NONE} no such schedule
--- @include "clock"
--- @include "schedule"

local schedule_key = KEYS[1]
local due_index_key = KEYS[2]
local runs_key = KEYS[3]
local next_occurrence = ARGV[1]
local due_index_member = ARGV[2]
local missed_occurrence = ARGV[3]
local missed_run_json = ARGV[4]
local runs_kept = ARGV[5]

if redis.call('EXISTS', schedule_key) == 0 then return { R.NONE } end
if redis.call('HGET', schedule_key, 'paused') == '1' then
  local now = now_ms()
  redis.call('HSET', schedule_key, 'paused', 0, 'reason', '')
  if missed_occurrence == '' then
    redis.call('HSET', schedule_key, 'next', next_occurrence)
  else
    local s = redis.call('HMGET', schedule_key, 'ctok', 'next')
    local unclaimed = not s[1] or s[1] == ''
    if unclaimed and s[2] == missed_occurrence and tonumber(missed_occurrence) <= now then
      redis.call('HSET', schedule_key, 'next', next_occurrence)
      redis.call('LPUSH', runs_key, missed_run_json)
      redis.call('LTRIM', runs_key, 0, tonumber(runs_kept) - 1)
    end
  end
  sched_reindex(schedule_key, due_index_key, due_index_member, now)
end
return { R.OK, unpack(sched_record(schedule_key)) }
