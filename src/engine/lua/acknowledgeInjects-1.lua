--[[
  Worker: removes the first N injects once they are safely in the checkpoint.

  KEYS[1] the conversation's inject list
  ARGV[1] how many to remove

  Returns how many are still waiting.
]]
if tonumber(ARGV[1]) > 0 then redis.call('LTRIM', KEYS[1], ARGV[1], -1) end
return redis.call('LLEN', KEYS[1])
