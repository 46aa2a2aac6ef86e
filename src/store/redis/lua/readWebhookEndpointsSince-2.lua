-- readWebhookEndpointsSince: a deliverer's endpoint cache check (ADR 0021, "Batches"): the
-- tenant's endpoints version, and every endpoint only when the version moved from the one known.
-- Every change of an endpoint (create, update, delete, a disable by failures) moves the version
-- in its own script, so a cache refreshed here never serves a deleted or rotated endpoint.
-- KEYS[1] endpoints hash   KEYS[2] the tenant's endpoints version
-- ARGV[1] the version known, or "" for none
-- Replies: {R.OK, version, moved (0|1), endpoint JSON...}

local endpoints_key = KEYS[1]
local version_key = KEYS[2]
local known_version = ARGV[1]

local version = redis.call('GET', version_key) or '0'
if version == known_version then return { R.OK, tonumber(version), 0 } end
local reply = { R.OK, tonumber(version), 1 }
for _, v in ipairs(redis.call('HVALS', endpoints_key)) do reply[#reply + 1] = v end
return reply
