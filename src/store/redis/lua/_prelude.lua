-- The prelude of every script: the loader (scripts.ts) puts it first, after the reply table
-- `R`; no script includes it by name. Reads no KEYS or ARGV.

-- Scripts that read TIME and then write must replicate their effects, not the script (Redis < 5).
if redis.replicate_commands then redis.replicate_commands() end
