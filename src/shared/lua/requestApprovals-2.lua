--[[
  Worker: registers tool calls that wait for a person's approval (DESIGN §11), keeping any
  decision already made (a resumed attempt asks again for the same calls), and reads them all.
  Fenced: only the attempt that owns the run may ask.

  KEYS[1] the run's sequence hash (`owner`)
  KEYS[2] the run's approvals hash (call id → 'pending' or a decision; `deadline`; `parked`)
  ARGV[1] owner attempt
  ARGV[2] seconds to keep the approvals (the approval timeout and a margin)
  ARGV[3] the deadline (ms since the epoch), kept from the first time calls were asked for
  ARGV[4...] the call ids

  Returns {deadline, state of each call in order ('pending' or its decision)};
  error SUPERSEDED when another attempt owns the run.
]]
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return redis.error_reply('SUPERSEDED')
end
redis.call('HSETNX', KEYS[2], 'deadline', ARGV[3])
local result = {redis.call('HGET', KEYS[2], 'deadline')}
for i = 4, #ARGV do
  redis.call('HSETNX', KEYS[2], 'call:' .. ARGV[i], 'pending')
  table.insert(result, redis.call('HGET', KEYS[2], 'call:' .. ARGV[i]))
end
redis.call('EXPIRE', KEYS[2], ARGV[2])
return result
