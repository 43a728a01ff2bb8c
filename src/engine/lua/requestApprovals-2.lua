--[[
  Worker: registers tool calls the run must wait on — a person's approval (DESIGN §11) or the
  client's output of a client tool call (DESIGN §23) — keeping any answer already given (a resumed
  attempt asks again for the same calls), and reads them all. Each call keeps its own deadline,
  set when it is first asked for: a resumed attempt finds the one it parked with, while a later
  park of the same run (new calls) gets a fresh one.
  Fenced: only the attempt that owns the run may ask.

  KEYS[1] the run's sequence hash (`owner`)
  KEYS[2] the run's approvals hash (`call:<id>` → 'pending' or the answer; `deadline:<id>`;
          `client:<id>` marks a client tool call, which only the client's output answers)
  ARGV[1] owner attempt
  ARGV[2] seconds to keep the hash (the longest timeout and a margin; never shortened)
  ARGV[3] the deadline (ms since the epoch) of calls asked for the first time
  ARGV[4] 'approval' or 'client'
  ARGV[5] now (ms since the epoch, the worker's clock, which set the deadlines)
  ARGV[6...] the call ids

  A call still pending at its deadline becomes 'expired' here, in the same step as the read: a
  decision or output arriving after this read is refused (not pending), never accepted and ignored.
  Returns {state, deadline} of each call in order (state 'pending', 'expired' or its answer);
  error SUPERSEDED (`superseded`, src/engine/script-outcomes.ts) when another attempt owns the run.
]]
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return redis.error_reply('SUPERSEDED')
end
local result = {}
local now = tonumber(ARGV[5])
for i = 6, #ARGV do
  local call = 'call:' .. ARGV[i]
  if redis.call('HSETNX', KEYS[2], call, 'pending') == 1 then
    redis.call('HSET', KEYS[2], 'deadline:' .. ARGV[i], ARGV[3])
    if ARGV[4] == 'client' then redis.call('HSET', KEYS[2], 'client:' .. ARGV[i], '1') end
  end
  local deadline = redis.call('HGET', KEYS[2], 'deadline:' .. ARGV[i]) or ARGV[3]
  local state = redis.call('HGET', KEYS[2], call)
  if state == 'pending' and tonumber(deadline) <= now then
    state = 'expired'
    redis.call('HSET', KEYS[2], call, state)
  end
  table.insert(result, state)
  table.insert(result, deadline)
end
if redis.call('TTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
return result
