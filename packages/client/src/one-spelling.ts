/**
 * The one spelling of a test's id, as the service reads it: a UUID names the same test in any case
 * (RFC 9562), so it is lower-cased; any other id is compared byte for byte and kept as it is. The
 * cursor stores are keyed by it, so that a follow resumes whichever case the application spelled
 * the id in the last time.
 */

/** A UUID of any version, in either case. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `id` in its one spelling: a UUID lower-cased, any other id unchanged. */
export function oneSpelling(id: string): string {
  return UUID.test(id) ? id.toLowerCase() : id;
}
