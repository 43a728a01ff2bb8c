--[[
  Worker take: makes the attempt the run's owner (the fence of its publishes, approvals and end),
  unless a newer attempt owns it already. The owner only ever rises, as Postgres's claim does
  (`attempt < ?`): a stale attempt whose take arrives late cannot take the run back.

  KEYS[1] the run's sequence hash (`owner`)
  ARGV[1] the attempt (a number)

  Returns 0 `stale` | 1 `taken` (outcomes named in src/engine/script-outcomes.ts).
]]
local owner = tonumber(redis.call('HGET', KEYS[1], 'owner'))
if owner and owner > tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1])
return 1
