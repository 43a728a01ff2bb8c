--[[
  Web: claims the conversation for a new run and publishes the run's first event. When the
  conversation already has an active run, the request's multitask strategy (DESIGN §19) decides:
  `reject` refuses; `enqueue` queues the run behind the others waiting; `interrupt` and `rollback`
  flag the active run to stop (with that kind: the worker reads it) and queue the run first, so it
  starts next. A queued run counts toward its user's active-run cap from now on. A run that carries
  client tools (it may park for them, DESIGN §23) also counts toward the user's PARKED_RUNS_PER_USER
  until it ends, checked here with the claim so that racing requests cannot pass it.

  KEYS[1] the conversation's active-run marker
  KEYS[2] the run's event stream
  KEYS[3] the user's active runs (sorted set scored by expiry)
  KEYS[4] the conversation's queue of waiting runs (list of run ids, first = next)
  KEYS[5] the user's unfinished runs that may park (sorted set scored by expiry)
  ARGV[1] run id
  ARGV[2] marker TTL in seconds
  ARGV[3] stream MAXLEN (approximate)
  ARGV[4] event type ('run')
  ARGV[5] event data
  ARGV[6] doorbell channel
  ARGV[7] the user's active-run cap
  ARGV[8] how to ring it: PUBLISH, or SPUBLISH on a cluster (the channel carries the keys' hash tag)
  ARGV[9] strategy: reject | enqueue | interrupt | rollback
  ARGV[10] most runs that may wait on the conversation
  ARGV[11] the prefix of the active run's keys (its cancel flag is <prefix><run id>:cancel: same hash tag)
  ARGV[12] the workers' cancel channel
  ARGV[13] PARKED_RUNS_PER_USER when the run carries client tools, else 0 (not counted)
  ARGV[14] how long its entry there lives unrefreshed, in seconds

  Returns {outcome, entry id or '', active run id or ''}; outcome (named in src/engine/script-outcomes.ts)
  'claimed' (the run is active now), 'queued' (behind the active run), 'busy' (reject), 'full' (queue at
  its bound), 'limit' (user's cap) or 'parked_limit' (PARKED_RUNS_PER_USER).
]]
local active = redis.call('GET', KEYS[1])
local strategy = ARGV[9]
-- A conversation being deleted (holdConversation-2.lua) takes no run, whatever the strategy.
if active and (strategy == 'reject' or string.sub(active, 1, 9) == 'deleting:') then return {'busy', '', active} end
if active and redis.call('LLEN', KEYS[4]) >= tonumber(ARGV[10]) then return {'full', '', active} end
local now = tonumber(redis.call('TIME')[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then return {'limit', '', active or ''} end
local parkedLimit = tonumber(ARGV[13])
if parkedLimit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
  if redis.call('ZCARD', KEYS[5]) >= parkedLimit then return {'parked_limit', '', active or ''} end
  redis.call('ZADD', KEYS[5], now + tonumber(ARGV[14]), ARGV[1])
  -- Never shorter than a parked run's entry (parkRun-6.lua lengthens it): the key outlives every entry.
  if redis.call('TTL', KEYS[5]) < tonumber(ARGV[14]) then redis.call('EXPIRE', KEYS[5], ARGV[14]) end
end
local outcome = 'claimed'
if not active then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
elseif strategy == 'enqueue' then
  redis.call('RPUSH', KEYS[4], ARGV[1])
  outcome = 'queued'
else
  -- A cancel already accepted stays a cancel; the first stop asked for is the one that counts.
  redis.call('SET', ARGV[11] .. active .. ':cancel', strategy, 'NX', 'EX', ARGV[2])
  redis.call('PUBLISH', ARGV[12], active)
  redis.call('LPUSH', KEYS[4], ARGV[1])
  outcome = 'queued'
end
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
redis.call('EXPIRE', KEYS[3], ARGV[2])
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'type', ARGV[4], 'data', ARGV[5])
redis.call(ARGV[8], ARGV[6], id)
return {outcome, id, active or ''}
