--[[
  Web: accepts a cancel only while the run holds its conversation (is queued or running), and
  tells every worker process.

  KEYS[1] the conversation's active-run marker
  KEYS[2] the run's cancel flag
  ARGV[1] run id
  ARGV[2] the workers' cancel channel
  ARGV[3] flag TTL in seconds

  Returns 1 when accepted, 0 when the run is not active.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[3])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
