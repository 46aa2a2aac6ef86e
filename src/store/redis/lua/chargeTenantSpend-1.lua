-- chargeTenantSpend: adds a cost to a tenant's spend in one window and answers the new total; a
-- charge of 0 only reads. One HINCRBY, so concurrent charges never lose one another. The caller
-- checked the window and the amount (a non-negative safe integer); nothing here can refuse.
-- KEYS[1] tenant budget hash: window ("total" or YYYY-MM-DD) -> micros spent
-- ARGV[1] window   ARGV[2] micros to add, as a decimal integer string
-- Replies: {R.OK, spent}   the window's total after the charge

local budget_key = KEYS[1]
local window = ARGV[1]
local added_micros = ARGV[2]

if added_micros == '0' then
  return { R.OK, tonumber(redis.call('HGET', budget_key, window) or '0') }
end
return { R.OK, redis.call('HINCRBY', budget_key, window, added_micros) }
