--[[
  Worker, after moving a run's job to delayed: the run now waits for approvals (DESIGN §11). It
  keeps its conversation (injects are still accepted) for as long as the approvals may take,
  leaves its user's active-run cap — and says whether it must wake at once: every call was
  decided, or a cancel accepted, in the meantime. The platform's one rule of "must it wake":
  `look` (ARGV[4]) only reads it, writing nothing (RunSignals.shouldWake: the wake sweep, the web's wait).

  KEYS[1] the run's approvals hash
  KEYS[2] the conversation's active-run marker
  KEYS[3] the conversation's inject list
  KEYS[4] the user's active runs
  KEYS[5] the run's cancel flag
  KEYS[6] the user's unfinished runs that may park (PARKED_RUNS_PER_USER): a run there stays counted while it waits
  ARGV[1] run id
  ARGV[2] seconds the marker and injects must last (the approval timeout and a margin)
  ARGV[3] seconds its KEYS[6] entry must last (the wait and the run's longest time running after it)
  ARGV[4] 'park', or 'look' (the decision only; ARGV[2] and ARGV[3] unused)

  Returns (outcomes named in src/engine/script-outcomes.ts) 1 `wake` when a cancel is pending or no
  call is still pending (every one answered; or none recorded, Redis having lost them: the woken
  attempt registers them again, so its client can answer), else 0 `keep_waiting`.
]]
local function mustWake()
  if redis.call('EXISTS', KEYS[5]) == 1 then return 1 end
  local entries = redis.call('HGETALL', KEYS[1])
  for i = 1, #entries, 2 do
    if string.sub(entries[i], 1, 5) == 'call:' and entries[i + 1] == 'pending' then return 0 end
  end
  return 1
end
if ARGV[4] == 'look' then return mustWake() end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('EXPIRE', KEYS[3], ARGV[2]) end
redis.call('ZREM', KEYS[4], ARGV[1])
local now = tonumber(redis.call('TIME')[1])
if redis.call('ZADD', KEYS[6], 'XX', 'CH', now + tonumber(ARGV[3]), ARGV[1]) == 1 and redis.call('TTL', KEYS[6]) < tonumber(ARGV[3]) then
  redis.call('EXPIRE', KEYS[6], ARGV[3])
end
return mustWake()
