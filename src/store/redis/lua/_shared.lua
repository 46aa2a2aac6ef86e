-- Helpers prepended to every script after the reply table `R` (see scripts.ts). Not a script
-- of its own: it holds no KEYS or ARGV and writes nothing.
--
-- Lease hash fields: tok (lease token), gen (fencing token), exp (expiry, epoch ms by the Redis
-- clock), oid (owner id), inc (incarnation id), own (owner JSON as the caller sent it).

-- Scripts that read TIME and then write must replicate their effects, not the script (Redis < 5).
if redis.replicate_commands then redis.replicate_commands() end

-- The Redis server clock is the only clock of the Redis backend.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Integers as decimal strings without exponent (tostring would switch to 1e+15 form).
local function num(x)
  return string.format('%.0f', x)
end

local function read_lease(key)
  local v = redis.call('HMGET', key, 'tok', 'gen', 'exp', 'oid', 'inc', 'own')
  if not v[1] then return nil end
  return { tok = v[1], gen = tonumber(v[2]), exp = tonumber(v[3]), oid = v[4], inc = v[5], own = v[6] }
end

-- The lease only while it is live: expiresAt <= now is expired (a TTL of 0 expires at once).
local function live_lease(key, now)
  local lease = read_lease(key)
  if lease and lease.exp > now then return lease end
  return nil
end

local function fence_matches(lease, tok, gen)
  return lease ~= nil and lease.tok == tok and lease.gen == tonumber(gen)
end

local function lease_reply(code, lease, reentered)
  return { code, lease.tok, num(lease.gen), num(lease.exp), lease.own, reentered and 1 or 0 }
end

-- New generation: one above the counter, which only ever grows, and never below the Redis clock
-- in ms. The clock floor is what keeps tokens from repeating across a failover (ADR 0022): a
-- promoted replica that never received the last claims has an older counter, but its clock has
-- moved past the lost tokens, so it still issues a greater one. Milliseconds stay below 10^13
-- until the year 2286: exact in a Lua number and in cjson's 14 significant digits.
local function acquire_lease(lease_key, gen_key, own, oid, inc, tok, now, exp)
  local gen = math.max(tonumber(redis.call('GET', gen_key) or '0') + 1, now)
  redis.call('SET', gen_key, num(gen))
  redis.call('HSET', lease_key, 'tok', tok, 'gen', num(gen), 'exp', num(exp), 'oid', oid, 'inc', inc, 'own', own)
  return { tok = tok, gen = gen, exp = exp, oid = oid, inc = inc, own = own }
end

-- HMGET in chunks, so long queues never overflow Lua's unpack limit. Missing fields are false.
local function hmget_all(key, ids)
  local out = {}
  local chunk = 500
  for i = 1, #ids, chunk do
    local last = math.min(i + chunk - 1, #ids)
    local part = redis.call('HMGET', key, unpack(ids, i, last))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end

-- A ready item, or one claimed by a generation the fence has superseded.
local function claimable(item, ready_state, gen)
  return item.state == ready_state or (item.state == 'claimed' and item.claimFencingToken < gen)
end

local function mark_claimed(key, id, item, gen, claim_id)
  item.state = 'claimed'
  item.claimFencingToken = gen
  item.claimId = claim_id
  local encoded = cjson.encode(item)
  redis.call('HSET', key, id, encoded)
  return encoded
end

-- Turn inputs below a session's settled watermark (`ilow` on the head hash, an input sequence)
-- are all completed or cancelled: scans that look for open inputs start above it, so a session's
-- old tombstones cost nothing per turn. Absent (sessions from before) reads 0: scan everything.
local function open_input_ids(head_key, index_key)
  local low = redis.call('HGET', head_key, 'ilow') or '0'
  return redis.call('ZRANGEBYSCORE', index_key, '(' .. low, '+inf')
end

-- Moves the watermark past the settled inputs that follow it, at most `budget` of them per call
-- (later commits continue), so a commit's cost stays bounded.
local function advance_input_watermark(head_key, index_key, inputs_key, budget)
  local low = redis.call('HGET', head_key, 'ilow') or '0'
  local moved = false
  local entries = redis.call('ZRANGEBYSCORE', index_key, '(' .. low, '+inf', 'WITHSCORES', 'LIMIT', 0, budget)
  for i = 1, #entries, 2 do
    local raw = redis.call('HGET', inputs_key, entries[i])
    if raw then
      local state = cjson.decode(raw).state
      if state ~= 'completed' and state ~= 'cancelled' then break end
    end
    low = entries[i + 1]
    moved = true
  end
  if moved then redis.call('HSET', head_key, 'ilow', low) end
end

-- Whether anything waits for a session's holder: a parked turn, queued work (ready or claimed),
-- an open input to run next or one claimed (its claimant may be gone). A holder releases its
-- lease only when nothing does (releaseIfIdle, and the commit that announces a turn).
local function waits_for_holder(head_key, inputs_key, index_key, work_index_key, parked_key)
  if redis.call('EXISTS', parked_key) == 1 or redis.call('ZCARD', work_index_key) > 0 then
    return true
  end
  local ids = open_input_ids(head_key, index_key)
  local metas = hmget_all(inputs_key, ids)
  for i = 1, #ids do
    if metas[i] then
      local input = cjson.decode(metas[i])
      if input.state == 'claimed' or (input.state == 'pending' and input.delivery.kind == 'next_turn') then
        return true
      end
    end
  end
  return false
end

-- Items with a source key (work batches, turn inputs): a source key seen before answers with the
-- item it stored (same content hash) or a conflict (other content). nil when the key is new.
local function source_key_reply(items_key, source_keys_key, source_key, content_hash)
  if source_key == '' then return nil end
  local seen = redis.call('HGET', source_keys_key, source_key)
  if not seen then return nil end
  local sep = string.find(seen, ':', 1, true)
  if string.sub(seen, 1, sep - 1) ~= content_hash then return { R.SOURCE_KEY_CONFLICT } end
  local existing = redis.call('HGET', items_key, string.sub(seen, sep + 1))
  if existing then return { R.DEDUPLICATED, existing } end
  return nil
end

-- Every incarnation of a session gets a transcript epoch when its head is created (see
-- SessionSnapshot.transcriptEpoch): the Redis clock in microseconds, distinct for a session
-- deleted and created again. Readers that cache a transcript compare it.
local function ensure_epoch(head_key)
  local t = redis.call('TIME')
  redis.call('HSETNX', head_key, 'ep', t[1] .. string.format('%06d', tonumber(t[2])))
end

-- Stores a new item, its payload, its index entry and its source key. A session without a
-- commit is created by its first stored item (ADR 0003). Returns 1 when it created the session.
local function store_new_item(keys, id, seq, item, payload, source_key, content_hash)
  redis.call('HSET', keys.items, id, cjson.encode(item))
  redis.call('HSET', keys.payloads, id, payload)
  redis.call('ZADD', keys.index, seq, id)
  if source_key ~= '' then redis.call('HSET', keys.source_keys, source_key, content_hash .. ':' .. id) end
  local created = redis.call('HSETNX', keys.head, 'rev', 1)
  if created == 1 then ensure_epoch(keys.head) end
  return created
end

-- Cancels items still in their open state; every id gets a status, in order:
-- cancelled | already_<state> | not_found. `on_cancel(id)` runs for each item cancelled now.
local function cancel_items(items_key, ids, open_state, on_cancel)
  local reply = { R.OK }
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', items_key, id)
    local status
    if not raw then
      status = 'not_found'
    else
      local item = cjson.decode(raw)
      if item.state == open_state then
        item.state = 'cancelled'
        redis.call('HSET', items_key, id, cjson.encode(item))
        if on_cancel then on_cancel(id) end
        status = 'cancelled'
      else
        status = 'already_' .. item.state
      end
    end
    reply[#reply + 1] = id
    reply[#reply + 1] = status
  end
  return reply
end

-- Marks the taken items claimed and appends each one's JSON and payload to `reply`.
local function append_claimed(reply, items_key, payloads_key, taken, id_field, gen, claim_id)
  for _, item in ipairs(taken) do
    local id = item[id_field]
    reply[#reply + 1] = mark_claimed(items_key, id, item, gen, claim_id)
    reply[#reply + 1] = redis.call('HGET', payloads_key, id)
  end
  return reply
end

-- A session's history (domain/history.ts). The history list holds "<message count>:<turn index>"
-- per revision from `hf` on the head hash (1, or the revision a fork started from, or the first
-- commit of a session stored before history was kept). The rewinds list holds, oldest first,
-- {r = rewind's revision, n = messages it kept, a = start in the archive, l = messages it moved
-- there}; the archive holds the messages rewinds took off the transcript, so nothing is lost.

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

local function rpush_all(key, values)
  for i = 1, #values, 500 do
    redis.call('RPUSH', key, unpack(values, i, math.min(i + 499, #values)))
  end
end

-- A transcript epoch no earlier one of the session had (a rewind rewrites the transcript).
local function new_epoch(head_key, rev)
  local t = redis.call('TIME')
  redis.call('HSET', head_key, 'ep', t[1] .. string.format('%06d', tonumber(t[2])) .. '.' .. num(rev))
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

-- A turn's steered inputs still pending become next-turn input, marked deferred; returns the
-- ids moved, in sequence order.
local function defer_turn_inputs(head_key, index_key, inputs_key, turn_id)
  local ids = open_input_ids(head_key, index_key)
  local metas = hmget_all(inputs_key, ids)
  local moved = {}
  for i = 1, #ids do
    if metas[i] then
      local input = cjson.decode(metas[i])
      if input.state == 'pending' and input.delivery.kind == 'active_turn'
        and input.delivery.turnId == turn_id then
        input.delivery = { kind = 'next_turn' }
        input.deferred = true
        redis.call('HSET', inputs_key, ids[i], cjson.encode(input))
        moved[#moved + 1] = ids[i]
      end
    end
  end
  return moved
end

-- Closes a turn's client tool calls (every recorded one when ids is empty): pending ones become
-- closed, answered ones keep their answer, and the hash is kept `retention` ms from now. Returns
-- {id, state JSON, ...} for the calls it holds (closeToolCalls, and the commit that announces
-- the turn: answers after the turn's end are for a turn that ended).
local function close_tool_calls(key, ids, retention)
  if #ids == 0 then ids = redis.call('HKEYS', key) end
  local states = {}
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', key, id)
    if raw then
      if cjson.decode(raw).s == 'p' then
        raw = '{"s":"c"}'
        redis.call('HSET', key, id, raw)
      end
      states[#states + 1] = id
      states[#states + 1] = raw
    end
  end
  if redis.call('EXISTS', key) == 1 then redis.call('PEXPIRE', key, retention) end
  return states
end

-- A tenant's quota counters as of `now` (ADR 0015): fixed windows by the Redis clock, so a count
-- stored for an earlier window reads 0. Counter hash fields: tw/tc (turn minute window, turns),
-- kw/kc (token minute window, tokens), dw/dc (day window, tokens). Running turns are the slots
-- whose expiry is after now (slots_key may be nil when the caller needs no slots).
local QUOTA_MINUTE_MS = 60000
local QUOTA_DAY_MS = 86400000
local function quota_usage(slots_key, counters_key, now)
  local minute = math.floor(now / QUOTA_MINUTE_MS)
  local day = math.floor(now / QUOTA_DAY_MS)
  local c = redis.call('HMGET', counters_key, 'tw', 'tc', 'kw', 'kc', 'dw', 'dc')
  local function at(window, count, current)
    if window and tonumber(window) == current then return tonumber(count) or 0 end
    return 0
  end
  local running = 0
  if slots_key then running = redis.call('ZCOUNT', slots_key, '(' .. num(now), '+inf') end
  return {
    minute = minute, day = day, running = running,
    turns = at(c[1], c[2], minute), kmin = at(c[3], c[4], minute), kday = at(c[5], c[6], day),
    minute_reset = (minute + 1) * QUOTA_MINUTE_MS, day_reset = (day + 1) * QUOTA_DAY_MS,
  }
end

-- The first token limit used up ({name, ms until it may free}), or nil. 0 as a max: no limit.
local function quota_tokens_over(u, per_minute, per_day, now)
  if per_minute > 0 and u.kmin >= per_minute then return { 'tokens_per_minute', u.minute_reset - now } end
  if per_day > 0 and u.kday >= per_day then return { 'tokens_per_day', u.day_reset - now } end
  return nil
end

-- Schedule hash fields (ADR 0020): tenant, id, spec (the client's spec, opaque here), rev
-- (bumped by each update), paused (0/1), reason, next (next regular occurrence, '' for none),
-- last (occurrence of the last fire), runnow (a run-now request's instant, '' for none), and the
-- claim: ctok (token), cat (claimed occurrence), cexp (claim expiry), crn (1: a run-now claim).
local SCHED_FIELDS = { 'tenant', 'id', 'spec', 'rev', 'paused', 'reason', 'next', 'last', 'runnow' }

local function sched_record(key)
  return redis.call('HMGET', key, unpack(SCHED_FIELDS))
end

local function sched_live_claim(key, now)
  local c = redis.call('HMGET', key, 'ctok', 'cat', 'cexp', 'crn')
  if c[1] and c[1] ~= '' and tonumber(c[3]) > now then
    return { tok = c[1], at = c[2], exp = tonumber(c[3]), rn = c[4] }
  end
  return nil
end

-- Puts the schedule in the due index at the instant it is next looked at: a live claim's expiry,
-- else its earliest occurrence unless paused; removes it when there is none.
local function sched_reindex(key, due_key, member, now)
  local claim = sched_live_claim(key, now)
  if claim then
    redis.call('ZADD', due_key, num(claim.exp), member)
    return
  end
  local s = redis.call('HMGET', key, 'paused', 'next', 'runnow')
  local at = nil
  if s[1] ~= '1' then
    if s[2] and s[2] ~= '' then at = tonumber(s[2]) end
    if s[3] and s[3] ~= '' and (at == nil or tonumber(s[3]) < at) then at = tonumber(s[3]) end
  end
  if at then redis.call('ZADD', due_key, num(at), member) else redis.call('ZREM', due_key, member) end
end

-- A webhook outbox row (ADR 0021): e = the event's JSON as given, a = attempts, d = due ms,
-- t = JSON [endpoint ids] or "" for every endpoint that wants it, k = claim token, l = lease
-- expiry ms. Kept as given (never re-encoded), so an empty list stays a list. False when the
-- event's row is there already.
local function write_outbox_row(key, id, event_json, targets, now)
  local row = cjson.encode({ e = event_json, a = 0, d = now, t = targets, k = '', l = 0 })
  return redis.call('HSETNX', key, id, row) == 1
end

-- The open inputs that `admit(delivery)` takes, claimable under generation `gen`, in sequence
-- order, at most `max` (claimInputs, startTurn).
local function take_open_inputs(items_key, index_key, head_key, gen, max, admit)
  local ids = open_input_ids(head_key, index_key)
  local metas = hmget_all(items_key, ids)
  local taken = {}
  for i = 1, #ids do
    if #taken >= max then break end
    if metas[i] then
      local input = cjson.decode(metas[i])
      if admit(input.delivery) and claimable(input, 'pending', gen) then taken[#taken + 1] = input end
    end
  end
  return taken
end

-- loadSession's reply: the committed state, with the messages after the caller's mark when it
-- names this transcript's epoch (loadSession, startTurn).
-- {R.OK, rev, turn, in, out, cacheRead, cacheWrite, reasoning, epoch, from, cost, n, msg1..msgn,
--  key1, value1, ...}, or {R.NONE} before the first commit
local function session_state(head_key, messages_key, metadata_key, mark_epoch, mark_count)
  local h = redis.call('HMGET', head_key, 'rev', 'turn', 'in', 'out', 'cr', 'cw', 'rs', 'ep', 'cost')
  if not h[1] then return { R.NONE } end
  local reply = { R.OK }
  for i = 1, 7 do reply[#reply + 1] = h[i] or '0' end
  local epoch = h[8] or ''
  local from = 0
  if epoch ~= '' and epoch == mark_epoch and mark_count <= redis.call('LLEN', messages_key) then
    from = mark_count
  end
  reply[#reply + 1] = epoch
  reply[#reply + 1] = from
  reply[#reply + 1] = h[9] or '0'
  local messages = redis.call('LRANGE', messages_key, from, -1)
  reply[#reply + 1] = #messages
  for _, m in ipairs(messages) do reply[#reply + 1] = m end
  for _, v in ipairs(redis.call('HGETALL', metadata_key)) do reply[#reply + 1] = v end
  return reply
end

-- submitInput's step, also the first part of startTurn's: the input stored with the next
-- sequence, or the source key's earlier input answered. k and a are the first 8 keys and 6
-- arguments, which both scripts name alike (submitInput-8.lua's header lists them; startTurn
-- passes its ARGV[18] as the sixth, the submitter's traceparent).
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
  local keys = { items = k[1], payloads = k[2], index = k[3], source_keys = k[4], head = k[6] }
  local created = store_new_item(keys, a[1], seq, input, a[5], a[2], a[3])
  return { R.OK, seq, created, busy }
end
