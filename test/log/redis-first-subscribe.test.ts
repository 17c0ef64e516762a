/**
 * Subscribing the moment the state is built, before its subscriber connection is up (what the
 * response cache and the first followers do as a replica starts): the subscription waits for the
 * connection and holds, instead of failing with "Stream isn't writeable" and a warning at every
 * start. The state is built the way a process builds it, against the machine's Redis.
 */
import { describe, expect, it } from 'vitest';
import { createResultLogFromConfig } from '../../src/app/result-log-from-config.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { loadConfig } from '../../src/config/config.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { incoming, uniqueId } from './storage-contract.js';

describe('the first subscription of a new Redis state', () => {
  it('opens a change feed, a watch of it and a follower at once, before the connections are up, and all deliver', async () => {
    const prefix = uniqueId('first-subscribe');
    const state = createResultLogFromConfig(
      loadConfig({ STATE_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: prefix }),
      createSilentLogger(),
    );
    try {
      const told: string[] = [];
      const [changes, stop] = await Promise.all([state.log.changes({ queueLimit: 10, canSee: () => true }), state.log.watchChanges((id) => told.push(id))]);
      const id = uniqueId('first');
      await state.log.create({ correlationId: id, input: null, owner: 'alice' });
      const follower = await state.log.follow(id, { queueLimit: 10 });
      await state.log.append([incoming(id, { sequence: 1, final: true })]);
      expect((await changes.next()).value).toMatchObject({ test: { correlationId: id } });
      expect(told).toContain(id);
      stop();
      const first = await follower.next();
      expect(first.value).toMatchObject({ sequence: 1 });
      await changes.return?.();
    } finally {
      await state.dispose();
      await deleteRedisKeys(`${prefix}:*`);
    }
  });
});
