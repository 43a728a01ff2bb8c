--[[
  Admits requests of a credential under its rate limit (DESIGN §18) by GCRA, the generic cell rate
  algorithm: the key holds the credential's theoretical arrival time (TAT), the moment its used quota has
  all come back. Each admitted request moves the TAT one interval (period / limit) later; a request is
  admitted while the TAT it would leave is at most one period ahead of now. So the whole limit may be
  used at once, and then one request comes back every interval: never a second full burst at a window's
  edge, as fixed windows allow. A refused request changes nothing (hammering does not lengthen the wait).
  Times are Redis's own clock (TIME), in whole microseconds, so every web process agrees and the
  arithmetic is exact.

  One call may reserve several requests at once (a web process's batch, src/limits/rate-limits.ts): it
  grants as many of the wanted as fit, exactly as that many requests arriving together would be, and
  moves the TAT by the granted × interval. The granted requests occupy the consecutive cells (moments)
  [old TAT, new TAT) one interval apart; the caller spends each no later than its cell, so whatever it
  spends is what GCRA would have admitted at that moment.

  KEYS[1] the credential's state: its TAT, microseconds since the epoch; it expires when the TAT passes
  ARGV[1] the limit: requests per period (1–100,000)
  ARGV[2] the period, milliseconds
  ARGV[3] the requests wanted (≥ 1; absent: 1)

  Returns {granted requests (0 = refused, the state unchanged; else 1 to the wanted), remaining requests
  after them, ms until one more request would be admitted (0 while some remain), ms until the whole limit
  is back (rounded up: the new TAT is after − now where after − now > (this − 1) × 1000 µs)}.
]]
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2]) * 1000
local wanted = math.max(1, math.floor(tonumber(ARGV[3] or '1') or 1))
-- Rounded up to a whole microsecond: a steady stream never gets more than `limit` requests per period.
local interval = math.ceil(period / limit)
local window = interval * limit
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if tat < now then tat = now end
-- Requests that fit: each moves the TAT one interval, and it may end at most one window ahead (after a
-- lowered limit the TAT may already be further: none fit).
local room = math.floor((window - (tat - now)) / interval)
if room < 1 then
  return {0, 0, math.ceil((tat + interval - window - now) / 1000), math.ceil((tat - now) / 1000)}
end
local granted = math.min(wanted, room)
local after = tat + granted * interval
redis.call('SET', KEYS[1], string.format('%d', after), 'PX', math.ceil((after - now) / 1000))
local remaining = room - granted
local wait = 0
if remaining == 0 then wait = math.ceil((after + interval - window - now) / 1000) end
return {granted, remaining, wait, math.ceil((after - now) / 1000)}
