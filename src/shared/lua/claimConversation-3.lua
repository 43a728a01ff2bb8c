--[[
  Web: marks the conversation active for a new run and publishes the run's first event, unless the
  conversation already has an active run or the user is at the active-run cap.

  KEYS[1] the conversation's active-run marker
  KEYS[2] the run's event stream
  KEYS[3] the user's active runs (sorted set scored by expiry)
  ARGV[1] run id
  ARGV[2] marker TTL in seconds
  ARGV[3] stream MAXLEN (approximate)
  ARGV[4] event type ('run')
  ARGV[5] event data
  ARGV[6] doorbell channel
  ARGV[7] the user's active-run cap
  ARGV[8] how to ring it: PUBLISH, or SPUBLISH on a cluster (the channel carries the keys' hash tag)

  Returns the entry id when claimed; 0 when the conversation is busy; -1 when the user is at the cap.
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = tonumber(redis.call('TIME')[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
redis.call('EXPIRE', KEYS[3], ARGV[2])
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'type', ARGV[4], 'data', ARGV[5])
redis.call(ARGV[8], ARGV[6], id)
return id
