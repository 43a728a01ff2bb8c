--[[
  Replaces a model call's reservation (reserveBudgets-4.lua) by the tokens it used, reported or
  estimated, in one step on every budget of a run (DESIGN §21). A reservation already gone expired
  while the call still ran and was charged then: only what the call used beyond it is charged now.
  A call that reserved nothing (held 0, no member) is simply charged.

  KEYS[1], KEYS[2] the two budgets' counters of the current period (one budget: passed twice)
  KEYS[3], KEYS[4] the two budgets' reservations
  ARGV[1]          the call's member, `<call id>:<tokens>`
  ARGV[2]          the tokens it reserved
  ARGV[3]          the tokens it used
  ARGV[4], ARGV[5] each budget's limit; 0 = not a budget of this run: left alone
  ARGV[6], ARGV[7] each counter's expiry, unix seconds (its period's end and a margin)

  Returns 1 when a budget is now spent (used >= limit), else 0.
]]
local held, used = tonumber(ARGV[2]), tonumber(ARGV[3])
local spent = 0
for i = 1, 2 do
  local limit = tonumber(ARGV[3 + i])
  if limit > 0 then
    local removed = redis.call('ZREM', KEYS[2 + i], ARGV[1])
    local charge = used
    if removed == 0 then charge = math.max(0, used - held) end
    local total = redis.call('INCRBY', KEYS[i], charge)
    redis.call('EXPIREAT', KEYS[i], ARGV[5 + i])
    if total >= limit then spent = 1 end
  end
end
return spent
