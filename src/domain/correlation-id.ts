/**
 * The one spelling of a correlation id. A UUID names the same thing in any case (RFC 9562), so a
 * test must not have two ids that differ in case alone: every door (REST, GraphQL arguments,
 * cursors, result and request records) reads an id through {@link canonicalCorrelationId}, which
 * lower-cases a UUID and leaves any other id, compared byte for byte, as it is.
 */

/** A UUID of any version, in either case. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` is a UUID (any version, either case). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/**
 * `id` in its one spelling: a UUID lower-cased (as `randomUUID` makes them), any other id unchanged.
 * Every result record's id goes through it. An id already in lower case is its own spelling whether
 * it is a UUID or not, and lower-casing such a string hands it back unchanged for a fraction of the
 * pattern's cost (about 30 against 150–200 ns a record on Node 26), so the pattern runs only for
 * the ids that lower-casing changes.
 */
export function canonicalCorrelationId(id: string): string {
  if (id.length !== 36) return id;
  const lower = id.toLowerCase();
  return lower === id || !UUID.test(id) ? id : lower;
}

/**
 * What follows `<correlationId>/` at the head of `text` (a cursor, a message's id), with the id read
 * in its one spelling; undefined when `text` does not start with the id and a slash. Only the id's
 * own length is compared: an id longer than a UUID that starts like one keeps its case.
 */
export function afterIdPrefix(text: string, correlationId: string): string | undefined {
  const id = canonicalCorrelationId(correlationId);
  if (text.charCodeAt(id.length) !== 0x2f || canonicalCorrelationId(text.slice(0, id.length)) !== id) return undefined;
  return text.slice(id.length + 1);
}
