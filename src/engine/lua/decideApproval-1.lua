--[[
  Web: records a person's decision on a tool call that waits for one (DESIGN §11), and says
  whether every call of the run is now decided: then the caller wakes the run (promotes its
  delayed job). The worker parking the run checks the same after delaying the job, so whichever
  comes second wakes it; a worker sweep covers one that died in between.

  KEYS[1] the run's approvals hash
  ARGV[1] the call id
  ARGV[2] the decision (JSON)

  Returns (outcomes named in src/engine/script-outcomes.ts) 0 `not_pending` when the call does not
  wait for a decision (unknown, already decided, or a client tool call, which only its client's output
  answers); 1 `recorded`; 2 `all_decided` when recorded and every call is decided.
]]
local field = 'call:' .. ARGV[1]
if redis.call('HGET', KEYS[1], field) ~= 'pending' then return 0 end
if redis.call('HEXISTS', KEYS[1], 'client:' .. ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], field, ARGV[2])
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  if string.sub(entries[i], 1, 5) == 'call:' and entries[i + 1] == 'pending' then return 1 end
end
return 2
