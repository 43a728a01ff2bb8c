--[[
  Worker breakpoint (and heartbeat): keeps the run's hold on its conversation and its place under
  the user's cap alive, and reads what waits for the loop, without removing it.

  KEYS[1] the conversation's active-run marker
  KEYS[2] the user's active runs
  KEYS[3] the run's cancel flag
  KEYS[4] the conversation's inject list
  ARGV[1] run id
  ARGV[2] TTL in seconds

  Returns {0 `no_cancel` | 1 `cancel_pending`, every waiting inject payload...} (outcomes named in
  src/engine/script-outcomes.ts).
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
local now = tonumber(redis.call('TIME')[1])
redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[2])
local result = {redis.call('EXISTS', KEYS[3])}
for _, item in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do table.insert(result, item) end
return result
