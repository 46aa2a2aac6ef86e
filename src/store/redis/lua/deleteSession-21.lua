-- deleteSession: remove the session's state, lease, stamps, queue, inputs and turn records. The lease
-- generation counter is not among the keys: it survives, so fencing tokens never repeat.
-- KEYS[1] head hash   KEYS[2] message list   KEYS[3] metadata hash   KEYS[4] stamp hash
-- KEYS[5] lease hash  KEYS[6] sequence hash  KEYS[7] work hash       KEYS[8] work payload hash
-- KEYS[9] work index  KEYS[10] work sources  KEYS[11] input hash     KEYS[12] input payload hash
-- KEYS[13] input index   KEYS[14] input sources   KEYS[15] parked turn hash
-- KEYS[16] history list   KEYS[17] rewinds list   KEYS[18] archive list   KEYS[19] metadata log
-- KEYS[20] turn records hash   KEYS[21] turn order zset
-- Replies: {R.OK, existed} existed: 1 when it had a commit, queued work or inputs, else 0

local head_key = KEYS[1]
local work_key = KEYS[7]
local inputs_key = KEYS[11]

local existed = redis.call('EXISTS', head_key, work_key, inputs_key) > 0 and 1 or 0
redis.call('DEL', unpack(KEYS))
return { R.OK, existed }
