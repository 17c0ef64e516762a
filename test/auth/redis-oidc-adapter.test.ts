/**
 * The embedded issuer's Redis storage on a connection that is still connecting (a replica that
 * just started, or one in a failover): a call waits for it, within a bound, rather than failing
 * at once, as the connection has no offline queue (the service's connections never queue).
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisOidcAdapter } from '../../src/auth/redis-oidc-adapter.js';
import { deleteRedisKeys } from '../support/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `oidc-test-${process.pid}-${Date.now()}:`;
afterAll(() => deleteRedisKeys(`${prefix}*`));

describe('the Redis adapter of the embedded issuer', () => {
  it('waits for a connection that is still connecting, then stores and finds', async () => {
    // As the service opens it: no offline queue, so a command sent before `ready` fails at once.
    const redis = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    try {
      expect(redis.status).not.toBe('ready');
      const sessions = createRedisOidcAdapter({ redis, prefix })('Session');
      await sessions.upsert('s1', { uid: 'u1', accountId: 'alice' } as never, 60);
      expect(await sessions.find('s1')).toMatchObject({ uid: 'u1', accountId: 'alice' });
      expect(await sessions.findByUid('u1')).toMatchObject({ accountId: 'alice' });
    } finally {
      redis.disconnect();
    }
  });
});
