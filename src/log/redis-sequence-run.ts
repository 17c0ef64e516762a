/**
 * The meta field `run` of the Redis log (store format 2, store-format.ts): the deduplication keys
 * of a test's consecutive sequences held as one field instead of a field per message, as the
 * memory log holds them (memory-test-entry.ts `DedupeKeys`). A producer that counts up costs the
 * append script a comparison per message rather than a field read and a field write, which were
 * about half of the script's Redis CPU per message (bench/README.md, "The append script's
 * deduplication keys"); and a call's messages that are a run themselves, continuing the test's,
 * are pushed as a whole, in one comparison (redis-append-script.ts).
 *
 * The field is `<from>:<to>:<high>`. A run starts with the test's first stored message when that
 * message is keyed `s:<sequence>`, and holds the messages keyed `s:<from>` up to `s:<to - 1>`,
 * stored one after another from the start of the test's list: the stored copy of a sequence the
 * run holds is at position `sequence - from`, where a duplicate's receivedAt is read (checked
 * against the key its text starts with). It grows by a message that follows it both in sequence
 * and in the list; any other message's key takes a field of its own, as in format 1, and `high`
 * is the highest sequence such a field holds (-1 for none). So a sequence past both `to - 1` and
 * `high` is new without a read, the common case; one below `from`, or between `to` and `high`, is
 * read from its field.
 *
 * The script reads a run whatever the format (and keeps `high` up to date when a run exists); it
 * starts and grows runs only when the store's format is 2, so a replica of a release that reads
 * fields alone never shares a store with one (the format marker keeps it out). A test stored
 * under format 1 has no run and keeps its fields.
 */

/**
 * Lua helpers of the append script. A message's key inside the script is its sequence (a number)
 * when it is keyed `s:<sequence>` (the caller passes '' as its field: redis-append.ts, by
 * compact-message.ts `keyKind`; or a field spelled so, of at most 15 digits, exact as a Lua
 * number), else its field as given. `fieldOf(key)` answers its meta field; `readRun(field)` from,
 * to and high (nil for no run); `storedAt(msgs, index, sequence, now)` the receivedAt of the
 * stored copy at `index`, or `now` when that element is not the copy (a list that expired before
 * its meta hash, when a field would say "stored" too).
 */
export const RUN = `
local function runKey(field, sequence)
  if field == '' then return tonumber(sequence) end
  if string.byte(field, 2) == 115 and string.byte(field, 3) == 58 then
    local digits = string.match(field, '^~s:(%d+)$')
    if digits and #digits <= 15 and (digits == '0' or string.byte(digits, 1) ~= 48) then return tonumber(digits) end
  end
  return field
end
local function fieldOf(key)
  if type(key) == 'number' then return string.format('~s:%d', key) end
  return key
end
local function readRun(field)
  if not field then return nil end
  local from, to, high = string.match(field, '^(%d+):(%d+):(-?%d+)$')
  if not from then return nil end
  return tonumber(from), tonumber(to), tonumber(high)
end
local function storedAt(msgs, index, sequence, now)
  local text = redis.call('LINDEX', msgs, index)
  local head = string.format('{"key":"s:%d",', sequence)
  if type(text) ~= 'string' or string.sub(text, 1, #head) ~= head then return now end
  return string.match(text, '"receivedAt":([^,}]+)}$') or now
end
`;
