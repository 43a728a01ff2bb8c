--[[
  Web: records the client's outputs for client tool calls its run is parked on (DESIGN §23), all
  or none, and says whether every call of the run is now answered: then the caller wakes the run
  (as decideApproval does). Two requests answering the same call: the first records it, the
  second finds it answered. A run whose cancel was accepted takes no more outputs.

  KEYS[1] the run's approvals hash
  KEYS[2] the run's cancel flag
  ARGV[1], ARGV[2], … pairs: the call id, the output (JSON)

  Returns (outcomes named in src/engine/script-outcomes.ts) {0 `not_pending`, call id} when a call does
  not wait for a client output (unknown, answered, or not a client tool call); {-1 `cancelled`} when the
  run was cancelled; {1 `recorded`}; {2 `all_answered`} recorded and every call answered.
]]
if redis.call('EXISTS', KEYS[2]) == 1 then return {-1} end
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], 'call:' .. ARGV[i]) ~= 'pending' or redis.call('HEXISTS', KEYS[1], 'client:' .. ARGV[i]) == 0 then
    return {0, ARGV[i]}
  end
end
for i = 1, #ARGV, 2 do
  redis.call('HSET', KEYS[1], 'call:' .. ARGV[i], ARGV[i + 1])
end
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  if string.sub(entries[i], 1, 5) == 'call:' and entries[i + 1] == 'pending' then return {1} end
end
return {2}
