--[[
  Counts one more event in a fixed window (login throttling).

  KEYS[1] the counter
  ARGV[1] window length in seconds (set on the first increment only)

  Returns {count, seconds left in the window}.
]]
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('TTL', KEYS[1])}
