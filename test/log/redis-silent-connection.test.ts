/**
 * A Redis connection that goes silent: the network between the service and Redis stops carrying
 * packets and sends no reset (a NAT or a load balancer that forgot the flow, a proxy in front of a
 * managed Redis that hangs, a node replaced behind its address). Nothing errors on such a
 * connection: every command on it times out, for as long as the kernel keeps it (minutes), and a
 * subscriber connection, which sends nothing once subscribed, just stops hearing notices. The
 * service gives such a connection up and opens another: the command connection once its commands
 * get no answer, the subscriber connection through a heartbeat of its own; reads, appends,
 * readiness and live delivery come back without anything missed.
 *
 * A TCP proxy between the service and a private Redis server silences its open connections
 * (test/support/tcp-proxy.ts); the connections opened after that are carried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../src/base/logger.js';
import { loadConfig } from '../../src/config/config.js';
import type { RedisConfig } from '../../src/config/redis.js';
import { createRedisResultLog } from '../../src/log/redis-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { createRedisConnection } from '../../src/redis/redis-from-config.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { eventually } from '../support/graphql.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { incoming, uniqueId } from './storage-contract.js';

const prefix = `rcs-silent-${process.pid}`;
let server: PrivateRedis;
let proxy: TcpProxy;
let direct: RedisConfig;
let proxied: RedisConfig;

beforeAll(async () => {
  server = await startPrivateRedis();
  proxy = await startTcpProxy(Number(new URL(server.url).port));
  direct = loadConfig({ STATE_STORE: 'redis', REDIS_URL: server.url }).redis;
  proxied = loadConfig({ STATE_STORE: 'redis', REDIS_URL: `redis://${new URL(proxy.url).host}` }).redis;
});
afterAll(async () => {
  await proxy?.close();
  await server?.stop();
});

/** A log whose command and subscriber connections are opened on the configurations given. */
function openLog(commandsOn: RedisConfig, subscriberOn: RedisConfig): { log: ResultLog; close(): Promise<void> } {
  const clients: RedisClient[] = [
    createRedisConnection(commandsOn, createSilentLogger(), 'silent-commands'),
    createRedisConnection(subscriberOn, createSilentLogger(), 'silent-subscriber', { subscriber: true }),
  ];
  const [redis, subscriber] = clients as [RedisClient, RedisClient];
  const log = createRedisResultLog({ redis, subscriber, prefix, ttlSeconds: 600, maxMessagesPerTest: 100, logger: createSilentLogger() });
  return {
    log,
    async close() {
      await log.dispose();
      for (const client of clients) client.disconnect();
    },
  };
}

const ready = (log: ResultLog) =>
  log.check().then(
    () => true,
    () => false,
  );

describe('a Redis connection that goes silent (no answer, no reset)', () => {
  it('is given up and opened again: reads, appends and readiness come back on the command connection', { timeout: 60_000 }, async () => {
    const opened = openLog(proxied, direct);
    try {
      await eventually(() => ready(opened.log), 10_000, 'the log to be ready');
      const id = uniqueId('silent-commands');
      await opened.log.create({ correlationId: id, input: null, owner: 'alice' });
      proxy.silence();
      const silencedAt = Date.now();
      // The first read meets the silent connection: its command times out, a typed error.
      await expect(opened.log.get(id)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      // Then the connection is replaced, and the same log reads and writes again.
      await eventually(async () => (await opened.log.get(id).catch(() => undefined))?.owner === 'alice', 30_000, 'a read to be answered again');
      expect((await opened.log.append([incoming(id, { sequence: 1 })])).map((r) => r.outcome)).toEqual(['inserted']);
      await eventually(() => ready(opened.log), 10_000, 'the log to be ready again');
      console.log(`a silent command connection: reads answered again after ${((Date.now() - silencedAt) / 1000).toFixed(1)} s`);
    } finally {
      await opened.close();
    }
  });

  it('is given up and opened again on the subscriber connection: live delivery goes on, nothing missed', { timeout: 60_000 }, async () => {
    const follower = openLog(direct, proxied);
    const writer = openLog(direct, direct);
    try {
      await eventually(async () => (await ready(follower.log)) && ready(writer.log), 10_000, 'both logs to be ready');
      const id = uniqueId('silent-subscriber');
      await writer.log.create({ correlationId: id, input: null, owner: 'alice' });
      const delivered: number[] = [];
      const reading = (async () => {
        const messages = await follower.log.follow(id, { queueLimit: 100 });
        for await (const message of messages) delivered.push(message.sequence ?? -1);
      })();
      await writer.log.append([incoming(id, { sequence: 1 })]);
      await eventually(() => delivered.length === 1, 10_000, 'the first message to be pushed');

      proxy.silence();
      const silencedAt = Date.now();
      // Published while the subscriber connection hears nothing: read again once it is replaced.
      await writer.log.append([incoming(id, { sequence: 2 })]);
      await eventually(() => delivered.length === 2, 30_000, 'the message appended meanwhile to be pushed');
      const recoveredAfter = Date.now() - silencedAt;
      // And live again: the next one arrives through the new subscriber connection.
      await writer.log.append([incoming(id, { sequence: 3, final: true })]);
      await reading;
      expect(delivered).toEqual([1, 2, 3]);
      console.log(`a silent subscriber connection: live delivery back after ${(recoveredAfter / 1000).toFixed(1)} s`);
    } finally {
      await follower.close();
      await writer.close();
    }
  });
});
