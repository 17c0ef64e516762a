/**
 * The Lua scripts of the Redis log (see redis-result-log.ts for the key layout). They touch only
 * the keys they are given; the keys of one test share a hash tag. They hold no rule of the domain: no status names, no ordering (beyond noting
 * whether each message went to the end of its test's read order, see ORDER); they store what they are given,
 * deduplicate by key, count, and set a value only if absent.
 */
import { ORDER } from './redis-append-order.js';
import { RUN } from './redis-sequence-run.js';

/**
 * Publishes a change of the test on its change channel `changes` (with `publish`, a local of the
 * script: `PUBLISH`, or `SPUBLISH` on Redis Cluster). The change is a JSON object (decoded by
 * message-format.ts): the correlation id, `created` (1 created, 0 updated, 2 filled in by a
 * create), the owner ('' for none), the first finishing status ('' for none), the message count,
 * createdAt, updatedAt (the script's `now`) and, only from a change that sets it, the input's JSON
 * text: an append does not change the input, and up to `TEST_INPUT_MAX_BYTES` of it would otherwise
 * ride on every change of the test, to every replica. The caller passes the meta fields as they
 * stand after its writes (it read them once already: no second read).
 */
const CHANGE = `
local function change(id, created, count, changes, owner, finishedAs, createdAt, input)
  redis.call(publish, changes, cjson.encode({ id = id, created = created, owner = owner or '', finishedAs = finishedAs or '', count = count, createdAt = createdAt, updatedAt = now, input = input }))
end
`;

/** The meta fields the create script reads, in this order (redis-result-log.ts lists what they hold). */
const META_FIELDS = `local FIELDS = { 'finishedAs', 'owner', 'createdAt', 'input', 'updatedAt' }`;
/** The meta fields the append script reads: not the input, which an append neither changes nor announces. */
const APPEND_FIELDS = `local FIELDS = { 'finishedAs', 'owner', 'createdAt', 'order', 'run' }`;

/**
 * Appends the messages of one or more tests, each test's in the order given. A call names the
 * keys of every test it writes to, so on Redis Cluster a call carries one test (its keys share a
 * slot); on a single primary one call carries the whole batch.
 *
 * KEYS: meta and msgs of each test, 2 per test.
 * ARGV: now, ttl, max messages per test, the publish command (`PUBLISH`, or `SPUBLISH` on Redis
 * Cluster), `1` to keep runs of sequences (store format 2, redis-sequence-run.ts) or `0`, then per
 * test, in the order of KEYS: its correlation id, its notice channel, its change channel
 * (redis-channels.ts), its number of messages n, the number f of its messages that finish an
 * unfinished test, f pairs of such a message's position (1..n, in order) and the status it finishes
 * the test with, then its messages: either as a run (the first sequence, when they are keyed
 * `s:<from>`, `s:<from + 1>`, … in order, and the store keeps runs; then each one's stored text,
 * message-format.ts), or '' and 3 per message: its deduplication field (a field of the meta hash,
 * never one of its named fields; '' for the field `~s:<sequence>` of a message keyed by its
 * sequence, see redis-sequence-run.ts), its sequence ('' for none: for the meta field `order`, see
 * redis-append-order.ts) and its stored text.
 * Returns per test, in the same order: its first finishing status before the call ('' for none),
 * its message count before the call, its owner ('' for none, or when the call stored nothing), one
 * letter per message (`i` inserted, `o` over the maximum
 * and not stored, `d` duplicate), then the receivedAt of the stored copy of each duplicate.
 *
 * A key stored earlier in the same call counts as stored. Each test costs a fixed number of
 * commands whatever its number of messages: one HMGET reads its meta fields, and a second the
 * stored copies of the keys its run of sequences does not hold (none for a producer that counts
 * up; a run given as one that continues the test's, its list holding the test's run alone, is new
 * as a whole, known from an LLEN without looking at any key); what is new is pushed to the end of the test's list in one RPUSH, whose reply gives the count (the list keeps arrival order; readers order by sequence unless `order`
 * says that arrival order is the read order; what goes
 * beyond the maximum is trimmed off again), its keys, updatedAt, `order` and
 * (when they are new) createdAt and the first finishing status are written in one HSET, and one
 * notice with the new count is published on the test's channel, and one change (see CHANGE) on
 * the change channel, in the same atomic step: nothing can store without announcing.
 * On Redis Cluster both channels of a test hash to the slot of its keys, as SPUBLISH in a script
 * requires: a notice goes to the shard of its test only.
 */
export const APPEND = `
local now, ttl, max, publish, runs = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5] == '1'
local CHUNK = 1000
${CHANGE}
${APPEND_FIELDS}
${ORDER}
${RUN}
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

local out = {}
local a = 6
for t = 1, #KEYS, 2 do
  local meta, msgs = KEYS[t], KEYS[t + 1]
  local id, channel, changes, n, f = ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local finishing = {}
  for p = a + 5, a + 3 + 2 * f, 2 do finishing[tonumber(ARGV[p])] = ARGV[p + 1] end
  -- The pairs come by position: the first is the first to finish the test.
  local firstFinishing = f > 0 and ARGV[a + 6] or nil
  -- The messages: a run of sequences from \`from\` (their texts alone), or 3 arguments each.
  local from = tonumber(ARGV[a + 5 + 2 * f])
  local first = a + 6 + 2 * f
  local width = from and 1 or 3
  local last = first + width * (n - 1)
  a = last + width

  local named = redis.call('HMGET', meta, unpack(FIELDS))
  local finishedAs, owner, createdAt, ordered = named[1], named[2], named[3], named[4]
  local runFrom, runTo, high = readRun(named[5])
  local count, allowed, letters, earliers, fresh, moved, sequences = 0, 0, nil, {}, { 'updatedAt', now }, false, nil
  -- A run of sequences that starts where the test's run ends, while the list holds that run alone
  -- (every other stored message, a field's among them, is in the list too), or that starts the run
  -- of a test not there yet (no createdAt: no field, an empty list), is new as a whole when it fits
  -- under the maximum: pushed without a key read, the run grown in one step. Anything else takes
  -- the path below, message by message.
  -- \`listed == runTo - runFrom\` alone does not say the list holds the run alone: a list can
  -- expire before its meta hash (a create refreshes the meta hash only), and messages stored after
  -- that are counted by LLEN beside a run the list no longer holds. \`high < from\` (no sequence
  -- stored as a field past the run's end) is what sends such a test's redelivered run down the
  -- path below, where its stored copies are found; orderOfRun notes the order such messages leave.
  local listed = from and runs and redis.call('LLEN', msgs)
  if listed and listed + n <= max and ((runFrom and listed == runTo - runFrom and from == runTo and high < from) or (not runFrom and not createdAt and listed == 0)) then
    for i = first, last, CHUNK do redis.call('RPUSH', msgs, unpack(ARGV, i, math.min(i + CHUNK - 1, last))) end
    count, allowed, letters, moved = listed, n, string.rep('i', n), true
    if runFrom then runTo = from + n else runFrom, runTo, high = from, from + n, -1 end
    -- The first finishing status stored stays.
    if firstFinishing and not finishedAs then
      finishedAs = firstFinishing
      fresh[#fresh + 1] = 'finishedAs'
      fresh[#fresh + 1] = finishedAs
    end
  else
    -- Each message's key (its sequence, a number, when keyed by it: see runKey) and its stored copy:
    -- from the list for a key the run holds (a redelivery, rare), none for a sequence past the run
    -- and every field (the common case), from its field for any other. A store of format 1 whose
    -- tests hold no run keeps its fields as given.
    local numbered = runs or runFrom ~= nil
    local seen, wanted, wantedKeys, keys = {}, {}, {}, {}
    for m = first, last, width do
      local key
      if from then key = from + (m - first)
      else
        key = ARGV[m]
        if numbered then key = runKey(key, ARGV[m + 1]) end
      end
      keys[#keys + 1] = key
      if runFrom and type(key) == 'number' and key >= runFrom and (key < runTo or key > high) then
        if key < runTo and not seen[key] then seen[key] = storedAt(msgs, key - runFrom, key, now) end
      else
        wanted[#wanted + 1] = fieldOf(key)
        wantedKeys[#wanted] = key
      end
    end
    -- A test not there yet (no createdAt: its meta hash is written whole by its first write) has no field to read.
    if #wanted > 0 and createdAt then
      local stored = call('HMGET', meta, wanted)
      for i = 1, #wanted do
        if stored[i] then seen[wantedKeys[i]] = stored[i] end
      end
    end

    -- Each message is a stored duplicate (the receivedAt of its copy), a candidate (its index in
    -- texts), or a repeat of a candidate earlier in the call (minus that index).
    local kinds, texts = {}, {}
    sequences = {}
    -- A run's message is its text alone, its sequence its key; any other is field, sequence, text.
    for position = 1, n do
      local key, m = keys[position], first + width * (position - 1)
      local earlier = seen[key]
      if earlier then
        kinds[position] = earlier
      else
        texts[#texts + 1] = from and ARGV[m] or ARGV[m + 2]
        sequences[#texts] = from and key or ARGV[m + 1]
        seen[key] = -#texts
        kinds[position] = #texts
      end
    end
    -- The candidates are pushed first and the count read from the push's reply, not by an LLEN:
    -- those beyond the maximum (rare) are trimmed off again, in the same atomic step.
    if #texts > 0 then
      local length = 0
      for i = 1, #texts, CHUNK do length = redis.call('RPUSH', msgs, unpack(texts, i, math.min(i + CHUNK - 1, #texts))) end
      count = length - #texts
      allowed = math.max(0, math.min(#texts, max - count))
      if allowed == 0 and count == 0 then redis.call('DEL', msgs)
      elseif allowed < #texts then redis.call('LTRIM', msgs, 0, count + allowed - 1) end
    else
      count = listed or redis.call('LLEN', msgs)
    end

    local marks = {}
    for position = 1, #kinds do
      local kind = kinds[position]
      if type(kind) == 'string' then
        marks[position] = 'd'
        earliers[#earliers + 1] = kind
      elseif kind < 0 then
        -- A repeat: a duplicate of the stored candidate, or over the maximum as it was.
        if -kind <= allowed then
          marks[position] = 'd'
          earliers[#earliers + 1] = now
        else
          marks[position] = 'o'
        end
      elseif kind <= allowed then
        -- The test's first message starts a run (redis-sequence-run.ts), one that follows it in
        -- sequence and in the list joins it; any other takes a field, its sequence noted as high.
        local key, index = keys[position], count + kind - 1
        local number = type(key) == 'number'
        if runs and number and index == 0 then
          runFrom, runTo, high, moved = key, key + 1, -1, true
        elseif runs and number and runFrom and key == runTo and index == runTo - runFrom then
          runTo, moved = runTo + 1, true
        else
          fresh[#fresh + 1] = fieldOf(key)
          fresh[#fresh + 1] = now
          if number and runFrom and key > high then high, moved = key, true end
        end
        -- The first finishing status stored stays.
        if finishing[position] and not finishedAs then
          finishedAs = finishing[position]
          fresh[#fresh + 1] = 'finishedAs'
          fresh[#fresh + 1] = finishedAs
        end
        marks[position] = 'i'
      else
        marks[position] = 'o'
      end
    end
    letters = table.concat(marks)
  end

  out[#out + 1] = named[1] or ''
  out[#out + 1] = count
  out[#out + 1] = allowed > 0 and owner or ''
  out[#out + 1] = letters
  for i = 1, #earliers do out[#out + 1] = earliers[i] end

  if allowed > 0 then
    local created, input = 0, nil
    if count == 0 and not createdAt then
      -- First seen through its results: it has no input, and the change that creates it says so.
      created, input = 1, 'null'
      createdAt = now
      fresh[#fresh + 1] = 'createdAt'
      fresh[#fresh + 1] = now
    end
    fresh[#fresh + 1] = 'order'
    fresh[#fresh + 1] = sequences and order(ordered, count, sequences, allowed) or orderOfRun(ordered, count, from, n)
    if moved then
      fresh[#fresh + 1] = 'run'
      fresh[#fresh + 1] = string.format('%d:%d:%d', runFrom, runTo, high)
    end
    call('HSET', meta, fresh)
    change(id, created, count + allowed, changes, owner, finishedAs, createdAt, input)
    redis.call('EXPIRE', meta, ttl)
    redis.call('EXPIRE', msgs, ttl)
    redis.call(publish, channel, count + allowed)
  end
end
return out
`;

/**
 * Records a started test unless a create already recorded it; a test known so far only through
 * its results (its meta hash has no `input`) is filled in: input, owner and, when given, createdAt.
 * Then answers it.
 *
 * KEYS: meta, msgs. ARGV: now, ttl, input (JSON), owner ('' for none), the test's change channel,
 * the correlation id, createdAt ('' for now), the publish command. Publishes a change when it creates the test (`created`
 * 1) or fills it in (`created` 2).
 * Returns the meta hash as a flat list of fields and values, then the stored messages.
 */
export const CREATE = `
local meta, msgs = KEYS[1], KEYS[2]
local now, changes, publish = ARGV[1], ARGV[5], ARGV[8]
local createdAt = ARGV[7]
if createdAt == '' then createdAt = now end
${CHANGE}
${META_FIELDS}
local created = redis.call('HSETNX', meta, 'createdAt', createdAt)
local kind
if created == 1 then
  redis.call('HSET', meta, 'input', ARGV[3], 'owner', ARGV[4], 'updatedAt', now)
  kind = 1
elseif redis.call('HEXISTS', meta, 'input') == 0 then
  redis.call('HSET', meta, 'input', ARGV[3], 'owner', ARGV[4], 'updatedAt', now)
  if ARGV[7] ~= '' then redis.call('HSET', meta, 'createdAt', ARGV[7]) end
  kind = 2
end
redis.call('EXPIRE', meta, ARGV[2])
-- The named fields only: the hash holds the deduplication keys too.
local values = redis.call('HMGET', meta, unpack(FIELDS))
local messages = redis.call('LRANGE', msgs, 0, -1)
if kind then change(ARGV[6], kind, #messages, changes, values[2], values[1], values[3], values[4] or 'null') end
local fields = {}
for i = 1, #FIELDS do
  if values[i] then
    fields[#fields + 1] = FIELDS[i]
    fields[#fields + 1] = values[i]
  end
end
return { fields, messages }
`;
