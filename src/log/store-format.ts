/**
 * The version of what the Redis log stores (the key layout of redis-result-log.ts, the texts of
 * message-format.ts, the lists of redis-test-index.ts), kept in Redis itself beside the data, under
 * `{prefix}:format`.
 *
 * Why in Redis: the data outlives the process that wrote it. Replicas of two releases share one
 * store during a rolling upgrade, and an operator may roll back; each must know whether it can
 * read and write what is there before it serves a read or stores a record. A replica that finds
 * no marker claims the store for its own format (`SET NX`: of two replicas starting at once, one
 * claims it and both read the claim). One that finds a format it does not know (a newer release
 * wrote it) is not ready and stores nothing, so a downgrade across a format change is refused
 * with a clear reason instead of writing texts the newer replicas would misread; the consumer of
 * such a replica leaves its records uncommitted for a replica that can store them.
 *
 * Format 1 is the first versioned one; data written before the marker existed is format 1 too
 * (message-format.ts reads every variant earlier versions wrote: changes without `input`, times in
 * whole milliseconds). Format 2 adds the meta field `run` (redis-sequence-run.ts): a test's
 * consecutive sequences held as one field rather than a field per message. This release reads
 * both and writes the format the marker names: a store marked 1 stays format 1 (a replica of the
 * release before may still share it) until an operator moves the marker once every replica runs
 * this release; a new store is claimed as 2. The policy for a change of format is in
 * docs/redis-and-replicas.md, "Stored format and upgrades".
 */
import type { RedisClient } from '../redis/redis-client.js';

/** The newest format this release writes: the one it claims a store without a marker for. */
export const STORE_FORMAT = 2;

/** The formats this release reads (and may find in the marker), and writes as the marker says. */
export const READABLE_STORE_FORMATS: ReadonlySet<number> = new Set([1, 2]);

/** The key of the marker, under the log's prefix. */
export function storeFormatKey(prefix: string): string {
  return `${prefix}:format`;
}

/** What a replica knows of the store's format. */
export interface StoreFormat {
  /**
   * Reads the marker (claiming the store for {@link STORE_FORMAT} when it has none) and resolves
   * when this release can read and write the store; rejects with the reason otherwise. Asked by
   * every readiness check, so a marker moved while the replica runs takes it out of rotation.
   */
  check(): Promise<void>;
  /**
   * Rejects, with the reason, when the last marker read names a format this release does not
   * know; reads the marker first when it has not been read yet. Called before every read and
   * write, whose caller answers `STORE_UNAVAILABLE` with this reason as its cause.
   */
  assertSupported(): Promise<void>;
  /**
   * The format this replica writes: the one the marker named when last read (once
   * {@link assertSupported} has resolved), {@link STORE_FORMAT} before the first read.
   */
  writes(): number;
}

/** Options of {@link createStoreFormat}. */
export interface StoreFormatOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
}

/** Creates the {@link StoreFormat} of the log under `prefix`. */
export function createStoreFormat({ redis, prefix }: StoreFormatOptions): StoreFormat {
  const key = storeFormatKey(prefix);
  /** Why the store cannot be written by this release, '' when it can; undefined until read once. */
  let refusal: string | undefined;
  let writing = STORE_FORMAT;

  const read = async (): Promise<string> => {
    // One round trip with auto-pipelining: claim when absent, then read whoever claimed it.
    const [, found] = await Promise.all([redis.set(key, String(STORE_FORMAT), 'NX'), redis.get(key)]);
    const format = Number(found);
    if (found !== null && Number.isSafeInteger(format) && READABLE_STORE_FORMATS.has(format)) {
      writing = format;
      return '';
    }
    const known = [...READABLE_STORE_FORMATS].join(', ');
    if (Number.isSafeInteger(format) && format > STORE_FORMAT) {
      return `the store under the prefix '${prefix}' holds format ${format}, written by a newer release; this release reads format ${known}: run a release that reads it (a rollback across a change of format is refused), or give this one a REDIS_KEY_PREFIX of its own`;
    }
    return `the store's format marker '${key}' holds ${JSON.stringify(found)}, which is no format this release knows (it reads ${known})`;
  };

  const check = async () => {
    refusal = await read();
    if (refusal !== '') throw new Error(refusal);
  };

  return {
    check,
    async assertSupported() {
      if (refusal === undefined) refusal = await read();
      if (refusal !== '') throw new Error(refusal);
    },
    writes: () => writing,
  };
}
