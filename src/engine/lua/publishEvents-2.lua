--[[
  Appends a batch of a run's events to its stream and rings the run's doorbell once (DESIGN §5:
  the stream is the record, the message only a doorbell). Fenced: only the attempt that owns the
  run may publish. Idempotent per (scope, seq): a resumed loop that makes an event again that was
  already published adds nothing.

  KEYS[1] the run's event stream
  KEYS[2] the run's sequence hash (last seq per scope, and `owner`)
  ARGV[1] stream MAXLEN (approximate)
  ARGV[2] doorbell channel
  ARGV[3] owner attempt ('' = not fenced)
  ARGV[4] seconds to keep the stream and hash once `done` is appended
  ARGV[5] how to ring it: PUBLISH, or SPUBLISH on a cluster (the channel carries the keys' hash tag)
  ARGV[6] the largest doorbell (bytes) that carries its events; 0 = never carry them
  ARGV[7...] the events, four values each: type, data (one-line JSON), scope ('' = not numbered), seq

  The doorbell carries the appended entries when they fit (issue 36): "<previous last id>\n" then
  "<id>\n<type>\n<data>" per entry, joined by "\n" (data is one-line JSON), so a reader whose last id
  is the previous one writes them without reading the stream; any other reader (behind, or a
  doorbell too large to carry them: then it is the count appended) reads the stream from its last id.

  Returns the number of events appended; error SUPERSEDED (`superseded`, src/engine/script-outcomes.ts)
  when another attempt owns the run.
]]
if ARGV[3] ~= '' and redis.call('HGET', KEYS[2], 'owner') ~= ARGV[3] then
  return redis.error_reply('SUPERSEDED')
end
local appended = 0
local final = false
local carryLimit = tonumber(ARGV[6])
local carried = {}
local carriedBytes = 0
local previous = nil
-- Each scope's last seq is read once per call and written once at its end (a batch of tokens is one scope).
local last = {}
local advanced = {}
for i = 7, #ARGV, 4 do
  local scope = ARGV[i + 2]
  local fresh = true
  if scope ~= '' then
    local seq = tonumber(ARGV[i + 3])
    if last[scope] == nil then last[scope] = tonumber(redis.call('HGET', KEYS[2], scope) or '0') end
    if seq <= last[scope] then
      fresh = false
    else
      last[scope] = seq
      advanced[scope] = true
    end
  end
  if fresh then
    if previous == nil and carryLimit > 0 then
      local tail = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
      previous = tail and tail[1] or '0-0'
    end
    local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'type', ARGV[i], 'data', ARGV[i + 1])
    if carryLimit > 0 then
      carriedBytes = carriedBytes + #id + #ARGV[i] + #ARGV[i + 1] + 3
      if carriedBytes > carryLimit then
        carryLimit = 0
      else
        carried[#carried + 1] = id
        carried[#carried + 1] = ARGV[i]
        carried[#carried + 1] = ARGV[i + 1]
      end
    end
    appended = appended + 1
    if ARGV[i] == 'done' then final = true end
  end
end
local numbered = {}
for scope in pairs(advanced) do
  numbered[#numbered + 1] = scope
  numbered[#numbered + 1] = last[scope]
end
if #numbered > 0 then redis.call('HSET', KEYS[2], unpack(numbered)) end
if final then
  redis.call('EXPIRE', KEYS[1], ARGV[4])
  redis.call('EXPIRE', KEYS[2], ARGV[4])
end
if appended > 0 then
  if carryLimit > 0 then
    redis.call(ARGV[5], ARGV[2], previous .. '\n' .. table.concat(carried, '\n'))
  else
    redis.call(ARGV[5], ARGV[2], appended)
  end
end
return appended
