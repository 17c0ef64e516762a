/**
 * Redis result logs for one test file, on the local Redis (`REDIS_URL`), under a key prefix of
 * their own: each log on connections of its own, as a replica has; the logs, their keys and the
 * connections are gone after the file.
 */
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { createRedisResultLog, type RedisResultLogOptions } from '../../src/log/redis-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { deleteRedisKeys } from './redis-keys.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** What {@link useRedisLogs} gives a test file. */
export interface RedisLogs {
  /** The key prefix of every log made here. */
  readonly prefix: string;
  /** A new connection to the local Redis, closed after the file. */
  connect(): Redis;
  /** A log on two new connections; `ttlSeconds` 3600 and 10,000 messages per test unless given. */
  createLog(options?: Partial<Pick<RedisResultLogOptions, 'ttlSeconds' | 'maxMessagesPerTest' | 'expiryCheckMs'>>): ResultLog;
}

/** Registers the cleanup and answers the file's logs, named after `label`. */
export function useRedisLogs(label: string): RedisLogs {
  const prefix = `${label}-${process.pid}-${Date.now()}`;
  const clients: Redis[] = [];
  const logs: ResultLog[] = [];
  const connect = () => {
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    clients.push(client);
    return client;
  };
  afterAll(async () => {
    await Promise.all(logs.map((log) => log.dispose()));
    await deleteRedisKeys(`${prefix}:*`);
    await Promise.all(clients.map((client) => client.quit().catch(() => undefined)));
  });
  return {
    prefix,
    connect,
    createLog(options = {}) {
      const log = createRedisResultLog({
        redis: connect(),
        subscriber: connect(),
        prefix,
        ttlSeconds: options.ttlSeconds ?? 3600,
        maxMessagesPerTest: options.maxMessagesPerTest ?? 10_000,
        ...(options.expiryCheckMs === undefined ? {} : { expiryCheckMs: options.expiryCheckMs }),
        logger: createSilentLogger(),
      });
      logs.push(log);
      return log;
    },
  };
}
