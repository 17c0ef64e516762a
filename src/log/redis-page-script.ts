import { RUN } from './redis-sequence-run.js';

/**
 * The read of one page of a test's messages in Redis (see redis-result-log.ts for the key layout),
 * in one atomic script call on the test's slot.
 *
 * While the meta field `order` (redis-append-script.ts, ORDER) says that the list in arrival order
 * is the test's read order and names the list's length, the page is a range of the list: LRANGE
 * of the page alone. A page after a message is found by scanning the list in Redis for the start of
 * that message's stored text, which the caller gives (message-format.ts): only the page leaves
 * Redis; a message its test's run of sequences holds (redis-sequence-run.ts) is at a known place
 * and is not scanned for. Otherwise (a message arrived out of sequence, or was pushed by a
 * version that does not keep `order`) the whole list is answered, for the caller to order.
 *
 * KEYS: meta, msgs. ARGV: first (at least 0), the deduplication field of the message to start after
 * ('' for the start), the start of that message's stored text.
 * Returns nothing for a test that is not there; otherwise the list's length, where the page starts
 * (-1: the whole list follows, in arrival order; -2: the test holds no message with that key), and
 * the stored texts of the page.
 */
export const PAGE = `
local meta, msgs = KEYS[1], KEYS[2]
local first, field, prefix = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local CHUNK = 1000
${RUN}
local fields = redis.call('HMGET', meta, 'createdAt', 'order', 'run')
if not fields[1] then return false end
local length = redis.call('LLEN', msgs)
if field == '' and first == 0 then return { length, 0, {} } end
-- The place of a message the run holds, checked against the start of its text.
local runFrom, runTo = readRun(fields[3])
local held
if field ~= '' and runFrom then
  local key = runKey(field, '')
  if type(key) == 'number' and key >= runFrom and key < runTo then
    local text = redis.call('LINDEX', msgs, key - runFrom)
    if type(text) == 'string' and string.sub(text, 1, #prefix) == prefix then held = key - runFrom + 1 end
  end
end
if field ~= '' and not held and redis.call('HEXISTS', meta, field) == 0 then return { length, -2, {} } end
local ordered = length == 0
if fields[2] then
  local counted = string.match(fields[2], '^(%d+):')
  if counted and tonumber(counted) == length then ordered = true end
end
if not ordered then return { length, -1, redis.call('LRANGE', msgs, 0, -1) } end
local start = held or 0
if field ~= '' and not held then
  start = nil
  for from = 0, length - 1, CHUNK do
    local chunk = redis.call('LRANGE', msgs, from, from + CHUNK - 1)
    for i = 1, #chunk do
      if string.sub(chunk[i], 1, #prefix) == prefix then
        start = from + i
        break
      end
    end
    if start then break end
  end
  -- Stored, but not as this version writes it: the caller finds it in the whole list.
  if not start then return { length, -1, redis.call('LRANGE', msgs, 0, -1) } end
end
if first == 0 or start >= length then return { length, start, {} } end
return { length, start, redis.call('LRANGE', msgs, start, start + first - 1) }
`;
