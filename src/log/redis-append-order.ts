/**
 * The meta field `order` of the Redis log, as the append script keeps it (redis-append-script.ts):
 * `<length>:<sequence of the last message>` while every message so far went to the end of the
 * test's read order, so that the list in arrival order is the list in read order and a reader can
 * take a page as a range of it; `x` from the first message that did not. The rule is
 * src/domain/order.ts's: a message goes to the end when it has no sequence, or when the last
 * message has none or one not greater than its own. A field naming another length than the list's
 * (a message pushed by a version that does not keep it) says nothing: the list is then taken as out
 * of order, for good.
 */

/**
 * Lua helpers of the append script. `order(field, count, sequences, allowed)` answers the field
 * after an append that stored `allowed` messages (their sequences, '' for none, in the order pushed)
 * to a list of `count`; `orderOfRun(field, count, from, n)` the same for `n` messages whose
 * sequences are `from`, `from + 1`, … (a run, redis-sequence-run.ts), in one comparison.
 */
export const ORDER = `
-- The sequence of the list's last message as the field gives it ('' for none), or nil when the
-- field says nothing (out of order, or written for another length).
local function lastOf(field, count)
  if count == 0 then return '' end
  if not field then return nil end
  local length, tail = string.match(field, '^(%d+):(.*)$')
  if length and tonumber(length) == count then return tail end
  return nil
end
local function order(field, count, sequences, allowed)
  local last = lastOf(field, count)
  if not last then return 'x' end
  -- The last sequence as a number (nil for none), each sequence read once.
  local previous = tonumber(last)
  for i = 1, allowed do
    local sequence = sequences[i]
    if sequence == '' then
      previous = nil
    else
      local number = tonumber(sequence)
      if previous and number < previous then return 'x' end
      previous = number
    end
    last = sequence
  end
  return (count + allowed) .. ':' .. last
end
local function orderOfRun(field, count, from, n)
  local last = lastOf(field, count)
  if not last then return 'x' end
  local previous = tonumber(last)
  if previous and from < previous then return 'x' end
  return string.format('%d:%d', count + n, from + n - 1)
end
`;
