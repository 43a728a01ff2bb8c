--[[
  The one atomic decision point of a run's end. Ends the run's hold on its conversation unless an
  inject is waiting (the loop must answer it) or a cancel is pending (which wins). Fenced like
  publishing: an attempt that no longer owns the run decides nothing. When runs wait on the
  conversation (DESIGN §19), the first of them takes the conversation over at once, so no other
  request can slip in between; the worker wakes its job once this run's end is recorded.

  KEYS[1] the conversation's inject list
  KEYS[2] the conversation's active-run marker
  KEYS[3] the run's cancel flag
  KEYS[4] the user's active runs
  KEYS[5] the run's sequence hash (`owner`)
  KEYS[6] the conversation's queue of waiting runs
  KEYS[7] the run's approvals hash (its gated and client tool calls)
  KEYS[8] the user's unfinished runs that may park (PARKED_RUNS_PER_USER)
  ARGV[1] run id
  ARGV[2] '1' = a pending cancel wins (finishing); '0' = release regardless (failing, cancelling)
  ARGV[3] owner attempt ('' = not fenced: the web undoing a claim)
  ARGV[4] marker TTL in seconds (for the run that takes over)

  Returns (outcomes named in src/engine/script-outcomes.ts) {2 `cancel_pending`, cancel kind} when a
  cancel is pending (and ARGV[2] = '1'), {0 `inject_waiting`, ''} when an inject is waiting,
  {1 `finished`, next run id or ''} when finished (marker, cap entry and approvals hash released: a
  client's tool output is never taken by a run that is over). The cancel flag stays: an accepted stop
  must outlive an attempt killed between this release and the run's final row (the next attempt sees
  it at its take), so the worker drops it with the run's other keys once the row is written (forget);
  it expires with the marker's TTL should nobody.
  error SUPERSEDED (`superseded`) when another attempt owns the run.
]]
if ARGV[3] ~= '' and redis.call('HGET', KEYS[5], 'owner') ~= ARGV[3] then
  return redis.error_reply('SUPERSEDED')
end
if ARGV[2] == '1' then
  local cancel = redis.call('GET', KEYS[3])
  if cancel then return {2, cancel} end
end
if redis.call('LLEN', KEYS[1]) > 0 then return {0, ''} end
local nextRun = ''
if redis.call('GET', KEYS[2]) == ARGV[1] then
  nextRun = redis.call('LPOP', KEYS[6])
  if nextRun then
    redis.call('SET', KEYS[2], nextRun, 'EX', ARGV[4])
    local now = tonumber(redis.call('TIME')[1])
    redis.call('ZADD', KEYS[4], now + tonumber(ARGV[4]), nextRun)
  else
    nextRun = ''
    redis.call('DEL', KEYS[2])
  end
end
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[8], ARGV[1])
redis.call('DEL', KEYS[7])
return {1, nextRun}
