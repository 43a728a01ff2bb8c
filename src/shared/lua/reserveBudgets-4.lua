--[[
  Reserves one model call's tokens on every budget of a run (DESIGN §21), so the calls in flight of a
  budget — DAG nodes, concurrent runs, every interface — share what is left of it. Each budget keeps
  its reservations in a sorted set scored by expiry (Redis's clock, milliseconds), members
  `<call id>:<tokens>`. A reservation past its expiry was left by a dead worker: it is pruned here and
  becomes a charge (its tokens are added to the counter) at the budget's next reservation, so a crash
  never lets a call go uncharged.

  A call may start when, on every budget, used + held + its own reservation ≤ limit, or when nothing
  else of that budget is in flight and used < limit (so a run always progresses while room is left).

  KEYS[1], KEYS[2] the two budgets' counters of the current period (the same user's hash tag; one budget: passed twice)
  KEYS[3], KEYS[4] the two budgets' reservations
  ARGV[1]          the call's member, `<call id>:<tokens>`
  ARGV[2]          the tokens to reserve
  ARGV[3]          how long the reservation lives, milliseconds
  ARGV[4], ARGV[5] each budget's limit; 0 = not a budget of this run: left alone
  ARGV[6], ARGV[7] each counter's expiry, unix seconds (its period's end and a margin)

  Returns {0, 0} reserved; {1, i} budget i has no room while others are in flight (wait and ask again);
  {2, i} budget i is spent (used >= limit).
]]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local tokens = tonumber(ARGV[2])

local function amount(member)
  return tonumber(string.match(member, ':(%d+)$')) or 0
end

local verdict = {0, 0}
for i = 1, 2 do
  local limit = tonumber(ARGV[3 + i])
  if limit > 0 then
    local counter, held = KEYS[i], KEYS[2 + i]
    local expired = redis.call('ZRANGEBYSCORE', held, '-inf', now)
    if #expired > 0 then
      local charge = 0
      for _, member in ipairs(expired) do charge = charge + amount(member) end
      redis.call('INCRBY', counter, charge)
      redis.call('EXPIREAT', counter, ARGV[5 + i])
      redis.call('ZREMRANGEBYSCORE', held, '-inf', now)
    end
    local used = tonumber(redis.call('GET', counter) or '0')
    if used >= limit then return {2, i} end
    local inFlight = redis.call('ZRANGE', held, 0, -1)
    local heldTokens = 0
    for _, member in ipairs(inFlight) do heldTokens = heldTokens + amount(member) end
    if #inFlight > 0 and used + heldTokens + tokens > limit and verdict[1] == 0 then verdict = {1, i} end
  end
end
if verdict[1] ~= 0 then return verdict end

local ttl = tonumber(ARGV[3])
for i = 1, 2 do
  if tonumber(ARGV[3 + i]) > 0 then
    redis.call('ZADD', KEYS[2 + i], now + ttl, ARGV[1])
    -- Emptied by its last settle, the set is gone; one a dead worker left goes a day after its newest
    -- reservation (charged long before, by the budget's next call) if the budget is never used again.
    redis.call('PEXPIRE', KEYS[2 + i], ttl + 86400000)
  end
end
return {0, 0}
