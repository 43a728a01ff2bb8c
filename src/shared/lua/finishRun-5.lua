--[[
  The one atomic decision point of a run's end. Ends the run's hold on its conversation unless an
  inject is waiting (the loop must answer it) or a cancel is pending (which wins). Fenced like
  publishing: an attempt that no longer owns the run decides nothing.

  KEYS[1] the conversation's inject list
  KEYS[2] the conversation's active-run marker
  KEYS[3] the run's cancel flag
  KEYS[4] the user's active runs
  KEYS[5] the run's sequence hash (`owner`)
  ARGV[1] run id
  ARGV[2] '1' = a pending cancel wins (finishing); '0' = release regardless (failing, cancelling)
  ARGV[3] owner attempt ('' = not fenced: the web undoing a claim)

  Returns 2 when a cancel is pending (and ARGV[2] = '1'), 0 when an inject is waiting,
  1 when finished (marker, cap entry and cancel flag released);
  error SUPERSEDED when another attempt owns the run.
]]
if ARGV[3] ~= '' and redis.call('HGET', KEYS[5], 'owner') ~= ARGV[3] then
  return redis.error_reply('SUPERSEDED')
end
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then return 2 end
if redis.call('LLEN', KEYS[1]) > 0 then return 0 end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('DEL', KEYS[3])
return 1
