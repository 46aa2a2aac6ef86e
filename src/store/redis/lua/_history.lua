-- Included as "history": a session's revisions, rewinds and metadata log. Reads no KEYS or ARGV
-- (ADR 0035).
--
-- A session's history (domain/history.ts). The history list holds "<message count>:<turn index>"
-- per revision from `hf` on the head hash (1, or the revision a fork started from, or the first
-- commit of a session stored before history was kept). The rewinds list holds, oldest first,
-- {r = rewind's revision, n = messages it kept, a = start in the archive, l = messages it moved
-- there}; the archive holds the messages rewinds took off the transcript, so nothing is lost.
--- @include "num"

-- "<count>:<turn>" of a revision, or nil when the session does not hold it.
local function history_point(head_key, hist_key, rev)
  local from = tonumber(redis.call('HGET', head_key, 'hf') or '1')
  if rev < from then return nil, from end
  local point = redis.call('LINDEX', hist_key, rev - from)
  if point then return point, from end
  -- Revision 1 of a session its first input created: nothing committed yet.
  if rev == 1 and redis.call('LLEN', hist_key) == 0 then return '0:0', from end
  return nil, from
end

local function split_point(point)
  local sep = string.find(point, ':', 1, true)
  return tonumber(string.sub(point, 1, sep - 1)), tonumber(string.sub(point, sep + 1))
end

-- Appends the new head's point; a session whose earlier revisions have none starts its history
-- here, with a snapshot of its metadata in the metadata log.
local function record_revision(head_key, hist_key, meta_key, meta_log_key, rev, count, turn)
  local from = tonumber(redis.call('HGET', head_key, 'hf') or '1')
  local kept = redis.call('LLEN', hist_key)
  if kept ~= rev - from then
    if kept == 0 and rev == 2 and from == 1 then
      redis.call('RPUSH', hist_key, '0:0')
    else
      redis.call('DEL', hist_key, meta_log_key)
      redis.call('HSET', head_key, 'hf', rev)
      redis.call('RPUSH', meta_log_key, cjson.encode({ r = rev, m = redis.call('HGETALL', meta_key) }))
    end
  end
  redis.call('RPUSH', hist_key, num(count) .. ':' .. num(turn))
end

-- The first n messages of a list of pieces {key, start, length}.
local function take_pieces(pieces, n)
  local out, left = {}, n
  for _, p in ipairs(pieces) do
    if left <= 0 then break end
    local len = math.min(p[3], left)
    out[#out + 1] = { p[1], p[2], len }
    left = left - len
  end
  return out
end

-- The transcript at a revision as pieces: the live list as it is, then back over every rewind
-- after the revision, the list as it was before it (what it kept, then what it archived).
local function transcript_pieces(msg_key, rewinds_key, archive_key, rev, count)
  local pieces = { { msg_key, 0, redis.call('LLEN', msg_key) } }
  local rewinds = redis.call('LRANGE', rewinds_key, 0, -1)
  for k = #rewinds, 1, -1 do
    local r = cjson.decode(rewinds[k])
    if r.r <= rev then break end
    pieces = take_pieces(pieces, r.n)
    pieces[#pieces + 1] = { archive_key, r.a, r.l }
  end
  return take_pieces(pieces, count)
end

local function append_pieces(out, pieces, first)
  for i = first, #pieces do
    local p = pieces[i]
    if p[3] > 0 then
      for _, m in ipairs(redis.call('LRANGE', p[1], p[2], p[2] + p[3] - 1)) do out[#out + 1] = m end
    end
  end
  return out
end

-- Metadata at a revision: the live hash at the head, else the log's patches up to it.
local function metadata_at(meta_key, meta_log_key, rev, head)
  if rev == head then return redis.call('HGETALL', meta_key) end
  local values, order = {}, {}
  for _, raw in ipairs(redis.call('LRANGE', meta_log_key, 0, -1)) do
    local entry = cjson.decode(raw)
    if entry.r > rev then break end
    for i = 1, #entry.m, 2 do
      local key, value = entry.m[i], entry.m[i + 1]
      if values[key] == nil then order[#order + 1] = key end
      values[key] = value
    end
  end
  local flat = {}
  for _, key in ipairs(order) do
    if values[key] ~= '' then
      flat[#flat + 1] = key
      flat[#flat + 1] = values[key]
    end
  end
  return flat
end
