--[[
  Charges one model call's tokens to the budgets of a run (DESIGN §18): an API key's and its user's,
  both counters of the current period, in one step, so concurrent runs see each other's charges.

  KEYS[1], KEYS[2] the two counters (the same user's hash tag; a run with one budget passes its counter twice)
  ARGV[1]          tokens to add
  ARGV[2], ARGV[3] each counter's limit; 0 = not a budget of this run: left alone
  ARGV[4], ARGV[5] each counter's expiry, unix seconds (its period's end and a margin)

  Returns 1 when a budget is now spent (used >= limit), else 0.
]]
local spent = 0
for i = 1, 2 do
  local limit = tonumber(ARGV[1 + i])
  if limit > 0 then
    local used = redis.call('INCRBY', KEYS[i], ARGV[1])
    redis.call('EXPIREAT', KEYS[i], ARGV[3 + i])
    if used >= limit then spent = 1 end
  end
end
return spent
