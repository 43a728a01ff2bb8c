--[[
  Web and the retention job: a conversation's deletion (DESIGN §20) holds it, so that no run can
  start or queue on it in between. `hold` sets the active-run marker to a tombstone, only while
  no run is active or waiting; while it stands, claimConversation refuses every new run
  (conversation_busy, whatever the strategy) and injectIfActive refuses injects (no active run).
  `release` (the deletion did not happen) and `linger` (it did: a request that read the
  conversation before it went cannot start a run that recreates it) act only on this tombstone.

  KEYS[1] the conversation's active-run marker
  KEYS[2] the conversation's queue of waiting runs
  ARGV[1] mode: hold | release | linger
  ARGV[2] the tombstone ('deleting:' .. a random token)
  ARGV[3] seconds: how long the hold lasts should its holder die (hold); how long it stays (linger)

  Returns (outcomes named in src/engine/script-outcomes.ts) 1 `done` on success; 0 `refused` when hold
  finds a run active or waiting (nothing set), or when release or linger find the marker no longer
  this tombstone (nothing changed).
]]
local mode = ARGV[1]
if mode == 'hold' then
  if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('LLEN', KEYS[2]) > 0 then return 0 end
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 1
end
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 0 end
if mode == 'linger' then
  redis.call('EXPIRE', KEYS[1], ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
