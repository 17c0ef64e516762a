/**
 * The Redis log's record of a started test (the create script, redis-append-script.ts): listed
 * before the script writes it (and, when the log waits for replicas, held by one before it counts as stored); a test first seen through its results is
 * filled in and moved in the lists to the time it holds. Answers the test as stored.
 */
import type { TestRecord } from '../domain/types.js';
import type { Logger } from '../base/logger.js';
import { listedThen } from './redis-guards.js';
import { toRecord } from './redis-record.js';
import type { RedisTestIndex } from './redis-test-index.js';
import type { NewTest } from './result-log.js';
import type { UnreadableMessages } from './unreadable-messages.js';
import type { RedisTestKeys } from './redis-test-keys.js';

/** Options of {@link createRedisNewTest}: the parts of the Redis log a create uses. */
export interface RedisNewTestOptions {
  readonly keysOf: (id: string) => RedisTestKeys;
  /** Runs the create script with its keys and arguments. */
  readonly run: (args: Array<string | number>) => Promise<[string[], string[]]>;
  readonly index: Pick<RedisTestIndex, 'stage' | 'place'>;
  /** Pushes the expiry of the given owners' lists back. */
  readonly refreshLists: (owners: Iterable<string>) => Promise<void>;
  readonly changeChannelOf: (meta: string) => string;
  /** `PUBLISH`, or `SPUBLISH` on Redis Cluster. */
  readonly publishCommand: string;
  readonly ttlSeconds: number;
  readonly unreadable: UnreadableMessages;
  readonly logger: Logger;
}

/** Creates the Redis log's `create`. */
export function createRedisNewTest(options: RedisNewTestOptions): (test: NewTest) => Promise<TestRecord> {
  const { keysOf, index, refreshLists, ttlSeconds } = options;
  return async (test) => {
    const k = keysOf(test.correlationId);
    const now = Date.now();
    // Listed (if new) before the script writes it: called first (redis-guards.ts `listedThen`).
    const listedAt = test.createdAt ?? now;
    const [meta, messages] = await listedThen(
      index.stage([test], listedAt),
      options.run([
        k.meta,
        k.msgs,
        now,
        ttlSeconds,
        JSON.stringify(test.input ?? null),
        test.owner ?? '',
        options.changeChannelOf(k.meta),
        test.correlationId,
        test.createdAt ?? '',
        options.publishCommand,
      ]),
    );
    await refreshLists(test.owner === null ? [] : [test.owner]);
    // Prototype-free: the hash also holds fields named by record keys (`~key`).
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    for (let i = 0; i < meta.length; i += 2) fields[meta[i] as string] = meta[i + 1] as string;
    // A test first seen through its results (it holds messages) is listed at the time it was
    // seen, and now keeps that time or takes its start's; one listed at another time than it
    // holds is moved too. Lists are read in their own order: they must say what the test says.
    if (fields.createdAt !== undefined && (messages.length > 0 || Number(fields.createdAt) !== listedAt)) {
      await index
        .place(test.correlationId, test.owner, Number(fields.createdAt))
        .catch((error: unknown) => options.logger.warn({ err: error }, 'could not move a test in the lists of tests'));
    }
    return toRecord(test.correlationId, fields, messages, (position, reason) => options.unreadable.report(test.correlationId, position, reason)) as TestRecord;
  };
}
