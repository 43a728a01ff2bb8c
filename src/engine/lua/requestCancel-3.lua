--[[
  Web: accepts a cancel only while the run holds its conversation (is queued or running) or waits
  on it behind another run (DESIGN §19: it leaves the queue), and tells every worker process.

  KEYS[1] the conversation's active-run marker
  KEYS[2] the run's cancel flag
  KEYS[3] the conversation's queue of waiting runs
  ARGV[1] run id
  ARGV[2] the workers' cancel channel
  ARGV[3] flag TTL in seconds

  Returns (outcomes named in src/engine/script-outcomes.ts) 1 `active` when accepted (the run is
  active), 2 `dequeued` when accepted and taken out of the queue (its job must be woken for a worker
  to end it), 0 `refused` when the run is neither.
]]
local outcome = 1
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  if redis.call('LREM', KEYS[3], 1, ARGV[1]) == 0 then return 0 end
  outcome = 2
end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[3])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return outcome
