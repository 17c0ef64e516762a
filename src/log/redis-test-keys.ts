/**
 * The Redis keys of one test, in one place: every file of the Redis log that reads or writes a
 * test names its keys through {@link redisTestKeys}. They share the test's hash tag (`{id}`), so on
 * Redis Cluster they live in one slot and one script may touch them all.
 */

/** The keys of one test. */
export interface RedisTestKeys {
  /** The test's record (a hash: status, input, owner, times). */
  readonly meta: string;
  /** Its messages, in the order they arrived (a list). */
  readonly msgs: string;
  /** Where earlier versions kept the deduplication keys: only deleted, gone within a TTL of an upgrade. */
  readonly keys: string;
  /** The channel its notices go out on. */
  readonly channel: string;
}

/** The keys of a test, by correlation id, under `prefix`. */
export function redisTestKeys(prefix: string): (correlationId: string) => RedisTestKeys {
  return (correlationId) => {
    const base = `${prefix}:{${correlationId}}`;
    return { meta: `${base}:meta`, msgs: `${base}:msgs`, keys: `${base}:keys`, channel: `${base}:notices` };
  };
}
