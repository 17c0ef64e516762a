/**
 * How the Redis log calls Redis: a script with `WAIT` for its replicas when asked (and the list
 * entries that go with it covered by a `WAIT` too), a failure turned into STORE_UNAVAILABLE (with the cluster's slot map refreshed after a redirection), and every call
 * but the readiness check made once the connection is ready and the store's format is known.
 */
import type { Cluster } from 'ioredis';
import { ServiceError } from '../base/errors.js';
import type { RedisClient } from '../redis/redis-client.js';
import { RECONNECT_WAIT_MS, whenReady } from '../redis/redis-ready.js';
import { APPEND, CREATE } from './redis-append-script.js';
import { PAGE } from './redis-page-script.js';
import type { StoreFormat } from './store-format.js';

/** The scripts, as ioredis defines them on the connection ({@link defineScripts}). */
export interface Scripts {
  rcsAppend(numberOfKeys: number, ...keysAndArgs: Array<string | number>): Promise<Array<string | number>>;
  rcsAppendOne(meta: string, msgs: string, ...args: Array<string | number>): Promise<Array<string | number>>;
  rcsCreate(meta: string, msgs: string, ...args: Array<string | number>): Promise<[string[], string[]]>;
  rcsPage(meta: string, msgs: string, first: number, field: string, start: string): Promise<[number, number, string[]] | null>;
}

/** Defines the log's {@link Scripts} on `redis`. */
export function defineScripts(redis: RedisClient): void {
  // ioredis sends EVALSHA and falls back to EVAL when the script is not cached (after a restart).
  // The append's number of keys varies with the tests of the call: it is its first argument. A
  // call for one test names its 2 keys first, as ioredis' auto-pipelining needs on a cluster (it
  // routes a script by its first argument).
  redis.defineCommand('rcsAppend', { lua: APPEND });
  redis.defineCommand('rcsAppendOne', { lua: APPEND, numberOfKeys: 2 });
  redis.defineCommand('rcsCreate', { lua: CREATE, numberOfKeys: 2 });
  redis.defineCommand('rcsPage', { lua: PAGE, numberOfKeys: 2 });
}

/** Options of {@link createRedisGuards}. */
export interface RedisGuardsOptions {
  readonly redis: RedisClient;
  /** The connection the scripts that write run on (`redis` unless the log was given its own: redis-result-log.ts). */
  readonly writer: RedisClient;
  readonly format: Pick<StoreFormat, 'assertSupported'>;
  /** Replicas that must acknowledge a script's write (0: none, no `WAIT`). */
  readonly waitReplicas: number;
  readonly waitTimeoutMs: number;
}

/** The Redis log's ways of calling Redis. */
export interface RedisGuards {
  /**
   * Runs a script; with `waitReplicas`, in one pipeline with WAIT, so both run on the node of the
   * script's keys (a pipeline goes to the node of its keyed commands), and fails unless enough
   * replicas acknowledged the write.
   */
  run<T>(name: keyof Scripts, args: Array<string | number>): Promise<T>;
  /**
   * Sends commands that go with a script's write (its tests' list entries), called before
   * {@link run}; resolves once they are stored, and with `waitReplicas` once the replicas hold them
   * too: a failover must not keep a test and lose its entry. With `waitReplicas` they go with a
   * `WAIT` of their own (on one node in one pipeline, on Redis Cluster one per command), not
   * under the script's: a connection cut between their answer and the script's makes ioredis send
   * the script again to the new primary, whose `WAIT` would not cover entries sent to the old one.
   */
  sendBefore(commands: ReadonlyArray<RedisCommand>): Promise<void>;
  /** Runs `operation`; a failure is STORE_UNAVAILABLE. */
  wrap<T>(operation: () => Promise<T>): Promise<T>;
  /**
   * Everything but the readiness check: waits up to RECONNECT_WAIT_MS for a reconnecting
   * connection first, and refuses a store whose format this release does not know (store-format.ts).
   */
  onceReady<T>(operation: () => Promise<T>): Promise<T>;
  /** {@link onceReady} for a write: waits for the writes' connection too, when they have their own. */
  onceWritable<T>(operation: () => Promise<T>): Promise<T>;
  /**
   * ioredis follows a redirection itself, except in a pipeline where other commands succeeded (a
   * script with its WAIT, an auto-pipeline): there the slot map is left stale, and every retry
   * would go to the old primary again. The map is refreshed before the retry.
   */
  refreshOnRedirect(error: unknown): void;
}

/** A command and its arguments, as a pipeline takes it. */
export type RedisCommand = readonly [name: string, ...args: Array<string | number>];

/** The replies of a pipeline whose last command is a WAIT: throws its first error, or unless `wanted` replicas acknowledged. */
function acknowledged(replies: Array<[Error | null, unknown]>, wanted: number, timeoutMs: number): void {
  for (const [error] of replies) if (error) throw error;
  const acks = Number(replies.at(-1)?.[1]);
  if (acks < wanted) throw new Error(`${acks} of ${wanted} replicas acknowledged the write within ${timeoutMs} ms`);
}

/**
 * Awaits the list entries and the script they go with, sent in that order (the index's `stage`,
 * through {@link RedisGuards.sendBefore}, called first, so that on one node the entries are written
 * before the script), and answers the script's reply once both are stored. On Redis Cluster the
 * lists live on other shards: both are awaited before the write counts as stored.
 */
export async function listedThen<T>(listed: Promise<void>, script: Promise<T>): Promise<T> {
  return (await Promise.all([listed, script]))[1];
}

/** Creates the guards over `redis` and `writer`, with the log's scripts defined on both. */
export function createRedisGuards(options: RedisGuardsOptions): RedisGuards {
  const { redis, writer, format, waitReplicas, waitTimeoutMs } = options;
  defineScripts(redis);
  if (writer !== redis) defineScripts(writer);
  const scripts = writer as unknown as Scripts;
  // Both clients' maps: a redirection seen by one (a script's, on the writer) means the other's map is as old.
  const refreshOnRedirect = (error: unknown) => {
    if (!redis.isCluster || !(error instanceof Error) || !/^(MOVED|ASK) /.test(error.message)) return;
    (redis as Cluster).refreshSlotsCache();
    if (writer !== redis) (writer as Cluster).refreshSlotsCache();
  };
  const wrap = async <T>(operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (error) {
      refreshOnRedirect(error);
      throw new ServiceError('STORE_UNAVAILABLE', 'The state store (Redis) is unavailable.', { cause: error });
    }
  };
  return {
    async run<T>(name: keyof Scripts, args: Array<string | number>): Promise<T> {
      if (waitReplicas === 0) return (scripts[name] as (...a: Array<string | number>) => Promise<T>).apply(writer, args);
      const pipeline = writer.pipeline();
      (pipeline as unknown as Record<keyof Scripts, (...a: Array<string | number>) => unknown>)[name](...args);
      pipeline.wait(waitReplicas, waitTimeoutMs);
      const replies = (await pipeline.exec()) ?? [];
      acknowledged(replies, waitReplicas, waitTimeoutMs);
      return replies[0]?.[1] as T;
    },
    async sendBefore(commands) {
      if (commands.length === 0) return;
      // Without WAIT, auto-pipelined: in the same round trip as the script, and before it, on one node.
      if (waitReplicas === 0) {
        await Promise.all(commands.map(([name, ...args]) => writer.call(name, ...args)));
        return;
      }
      // Written now (an explicit pipeline is not deferred as an auto-pipelined command is): before the script's.
      const pipelines = writer.isCluster ? commands.map((command) => [command]) : [commands];
      await Promise.all(
        pipelines.map(async (sent) => {
          const replies =
            (await writer
              .pipeline(sent.map((command) => [...command]))
              .wait(waitReplicas, waitTimeoutMs)
              .exec()) ?? [];
          acknowledged(replies, waitReplicas, waitTimeoutMs);
        }),
      );
    },
    wrap,
    onceReady: (operation) =>
      wrap(async () => {
        await whenReady(redis, RECONNECT_WAIT_MS);
        await format.assertSupported();
        return operation();
      }),
    onceWritable: (operation) =>
      wrap(async () => {
        // Both before anything is sent: a write's list entries and its script go on the writer,
        // the format check on `redis`, and neither connection queues a command while it reconnects.
        await Promise.all([whenReady(redis, RECONNECT_WAIT_MS), writer === redis ? undefined : whenReady(writer, RECONNECT_WAIT_MS)]);
        await format.assertSupported();
        return operation();
      }),
    refreshOnRedirect,
  };
}
