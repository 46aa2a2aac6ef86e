-- Included as "num": integers as Redis and cjson read them. Reads no KEYS or ARGV (ADR 0035).

-- Integers as decimal strings without exponent (tostring would switch to 1e+15 form).
local function num(x)
  return string.format('%.0f', x)
end
