--[[
  Worker: may a run that was queued behind another (DESIGN §19) start now? Yes when it holds the
  conversation (the run before it handed it over), or when a cancel is pending (it starts only to
  end: it is not admitted, only let through to end). If the conversation is free — the run before it vanished without handing over (its marker
  expired) — the first run of the queue takes it, or a run that is in no queue (its place was lost).

  KEYS[1] the conversation's active-run marker
  KEYS[2] the conversation's queue of waiting runs
  KEYS[3] the user's active runs
  KEYS[4] the run's cancel flag
  ARGV[1] run id
  ARGV[2] marker TTL in seconds

  Returns (outcomes named in src/engine/script-outcomes.ts) 1 `admitted` when the run may start,
  2 `end` when it must only end (cancelled while it waited), 0 `wait` when it must wait.
]]
if redis.call('EXISTS', KEYS[4]) == 1 then return 2 end
local active = redis.call('GET', KEYS[1])
if active == ARGV[1] then return 1 end
if active then return 0 end
local first = redis.call('LINDEX', KEYS[2], 0)
if first and first ~= ARGV[1] and redis.call('LPOS', KEYS[2], ARGV[1]) then return 0 end
redis.call('LREM', KEYS[2], 1, ARGV[1])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
local now = tonumber(redis.call('TIME')[1])
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
return 1
