/**
 * The Lua script behind the Redis store's appends (see redis-store.ts for the key layout): it
 * stores a batch of messages atomically; a single append is a batch of one.
 */

/**
 * A whole batch of messages, of one test or of many, in the order given, in one call.
 *
 * KEYS: meta, msgs and keys of each test of the batch, 3 per test, in the order of the ids in ARGV.
 * ARGV: now, ttl, max messages per test, channel prefix to publish each new message on ('' for
 * none), the number of tests T, the T correlation ids, then 5 per message: its test's number
 * (1..T), deduplication key, sequence ('' for none), the status it moves an unfinished test to
 * (RUNNING, COMPLETED or FAILED), and the list item to store: `<sequence>\t<message JSON>`, with
 * `receivedAt` = now.
 * Returns one reply per message: `i` (inserted), `o` (over-limit) or `d` (duplicate), then the
 * first letter of the test's status after it (P, R, C, F), then for a duplicate the receivedAt of
 * the stored copy.
 *
 * Every message sees the effect of the ones before it, so the results are those of one append per
 * message in order. The fixed work per test is done once per batch: when its first message comes,
 * the meta check, the length and one HMGET of all the batch's keys of the test (a key stored by an
 * earlier message of the batch is remembered in the script); at the end, the new items, the new
 * keys, the status, `updatedAt` and the expiry refresh (all written with the same `now`, so the
 * outcome is the same). Appends to the end of the list, the usual case, are pushed together.
 */
export const APPEND_MANY = `
local now, ttl, max, channel = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local count = tonumber(ARGV[5])
local first = 5 + count
local CHUNK = 1000

-- Many values in one command, in slices that stay within Lua's stack (pairs stay whole for HSET).
local function call(command, key, items)
  local replies = {}
  for i = 1, #items, CHUNK do
    local reply = redis.call(command, key, unpack(items, i, math.min(i + CHUNK - 1, #items)))
    if type(reply) == 'table' then
      for j = 1, #reply do replies[#replies + 1] = reply[j] end
    end
  end
  return replies
end

-- The keys each test's messages carry, to look them all up at once.
local wanted = {}
for t = 1, count do wanted[t] = {} end
for a = first, #ARGV - 1, 5 do
  local w = wanted[tonumber(ARGV[a + 1])]
  w[#w + 1] = ARGV[a + 2]
end

local tests = {}
local function open(t)
  local id, meta, msgs, keys = ARGV[5 + t], KEYS[3 * t - 2], KEYS[3 * t - 1], KEYS[3 * t]
  -- A meta hash always holds a status: none means no meta.
  local status = redis.call('HGET', meta, 'status')
  if not status then
    redis.call('HSET', meta, 'correlationId', id, 'status', 'PENDING', 'input', 'null', 'owner', '', 'createdAt', now, 'updatedAt', now)
    status = 'PENDING'
  end
  local seen = {}
  local stored = call('HMGET', keys, wanted[t])
  for i, key in ipairs(wanted[t]) do
    if stored[i] then seen[key] = stored[i] end
  end
  -- tail: the sequence prefix of the list's last item ('' for none), read only when needed.
  local test = { id = id, meta = meta, msgs = msgs, keys = keys, status = status, len = redis.call('LLEN', msgs),
    tail = nil, seen = seen, fresh = {}, pending = {} }
  tests[t] = test
  return test
end

local function flush(test)
  if #test.pending > 0 then
    call('RPUSH', test.msgs, test.pending)
    test.pending = {}
  end
end

local function prefix(item)
  local p = string.match(item, '^([^\\t]*)\\t')
  if p == nil then return '' end
  return p
end

local out = {}
for a = first, #ARGV - 1, 5 do
  local t = tonumber(ARGV[a + 1])
  local test = tests[t] or open(t)
  local key, seq = ARGV[a + 2], ARGV[a + 3]
  local earlier = test.seen[key]
  if earlier then
    out[#out + 1] = 'd' .. string.sub(test.status, 1, 1) .. earlier
  elseif test.len >= max then
    out[#out + 1] = 'o' .. string.sub(test.status, 1, 1)
  else
    local item = ARGV[a + 5]
    -- Ordered by sequence where given, else by arrival: a sequenced message goes after the last
    -- one whose sequence is not greater, never before an unsequenced one.
    if test.tail == nil then
      test.tail = test.len > 0 and prefix(redis.call('LINDEX', test.msgs, -1)) or ''
    end
    if seq == '' or test.tail == '' or tonumber(test.tail) <= tonumber(seq) then
      test.pending[#test.pending + 1] = item
      test.tail = seq
    else
      flush(test)
      local s = tonumber(seq)
      local index = test.len
      while index > 0 do
        local before = prefix(redis.call('LINDEX', test.msgs, index - 1))
        if before == '' or tonumber(before) <= s then break end
        index = index - 1
      end
      if index == test.len then
        redis.call('RPUSH', test.msgs, item)
        test.tail = seq
      else
        redis.call('LINSERT', test.msgs, 'BEFORE', redis.call('LINDEX', test.msgs, index), item)
      end
    end
    test.len = test.len + 1
    test.seen[key] = now
    test.fresh[#test.fresh + 1] = key
    test.fresh[#test.fresh + 1] = now
    if test.status ~= 'COMPLETED' and test.status ~= 'FAILED' then test.status = ARGV[a + 4] end
    if channel ~= '' then
      local message = string.sub(item, #seq + 2)
      redis.call('PUBLISH', channel .. test.id, '{"message":' .. message .. ',"status":"' .. test.status .. '"}')
    end
    out[#out + 1] = 'i' .. string.sub(test.status, 1, 1)
  end
end

for t = 1, count do
  local test = tests[t]
  if test and #test.fresh > 0 then
    flush(test)
    call('HSET', test.keys, test.fresh)
    redis.call('HSET', test.meta, 'status', test.status, 'updatedAt', now)
    redis.call('EXPIRE', test.meta, ttl)
    redis.call('EXPIRE', test.msgs, ttl)
    redis.call('EXPIRE', test.keys, ttl)
  end
end
return out
`;
