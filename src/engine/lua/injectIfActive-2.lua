--[[
  Web: queues an injected message only while the conversation has an active run.

  KEYS[1] the conversation's active-run marker
  KEYS[2] the conversation's inject list
  ARGV[1] the inject payload (JSON)
  ARGV[2] list TTL in seconds (at least; a run waiting for approval holds its marker longer, and the list lasts as long)

  Returns the active run's id, or false when there is none (nothing queued).
]]
local runId = redis.call('GET', KEYS[1])
-- A conversation being deleted (holdConversation-2.lua) has no run to inject into.
if not runId or string.sub(runId, 1, 9) == 'deleting:' then return false end
redis.call('RPUSH', KEYS[2], ARGV[1])
local ttl = math.max(tonumber(ARGV[2]), redis.call('TTL', KEYS[1]))
redis.call('EXPIRE', KEYS[2], ttl)
return runId
