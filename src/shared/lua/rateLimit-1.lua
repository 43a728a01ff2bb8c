--[[
  Admits one request of a credential under its rate limit (DESIGN §18) by GCRA, the generic cell rate
  algorithm: the key holds the credential's theoretical arrival time (TAT), the moment its used quota has
  all come back. Each admitted request moves the TAT one interval (period / limit) later; a request is
  admitted while the TAT it would leave is at most one period ahead of now. So the whole limit may be
  used at once, and then one request comes back every interval: never a second full burst at a window's
  edge, as fixed windows allow. A refused request changes nothing (hammering does not lengthen the wait).
  Times are Redis's own clock (TIME), in whole microseconds, so every web process agrees and the
  arithmetic is exact.

  KEYS[1] the credential's state: its TAT, microseconds since the epoch; it expires when the TAT passes
  ARGV[1] the limit: requests per period (1–100,000)
  ARGV[2] the period, milliseconds

  Returns {admitted (1 or 0), remaining requests, ms until one more request would be admitted (0 while
  some remain), ms until the whole limit is back}.
]]
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2]) * 1000
-- Rounded up to a whole microsecond: a steady stream never gets more than `limit` requests per period.
local interval = math.ceil(period / limit)
local window = interval * limit
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if tat < now then tat = now end
local after = tat + interval
if after - now > window then
  return {0, 0, math.ceil((after - window - now) / 1000), math.ceil((tat - now) / 1000)}
end
redis.call('SET', KEYS[1], string.format('%d', after), 'PX', math.ceil((after - now) / 1000))
local remaining = math.floor((window - (after - now)) / interval)
local wait = 0
if remaining == 0 then wait = math.ceil((after + interval - window - now) / 1000) end
return {1, remaining, wait, math.ceil((after - now) / 1000)}
