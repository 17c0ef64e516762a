/**
 * The client library's async-iterator form (`followIterator`) and its `AbortSignal`, against a real
 * service through the TCP proxy: a loop gets every message once and in order across a dropped
 * connection and ends when the test completes; a message is taken when the loop asks for the next
 * one, so leaving the loop hands its message over again to the next follow, and an abort after a
 * message keeps it taken; a failed follow throws its code; a callback follow stops on its signal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { follow, FollowError, followIterator, type FollowedMessage, type FollowIteratorOptions } from '@result-collection-service/client';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { incoming, storedTest as storeTest } from '../log/storage-contract.js';
import { eventually } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { defaultToken } from '../support/tokens.js';

const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 10_000, maxMessagesPerTest: 10_000 });
let svc: TestService;
let proxy: TcpProxy;
beforeAll(async () => {
  svc = await startPipelineService({ log });
  proxy = await startTcpProxy(svc.url);
});
afterAll(async () => {
  await proxy?.close();
  await svc?.stop();
});

const append = (id: string, sequence: number, final = false) => log.append([incoming(id, { sequence, final })]);

/** A cursor store over a map, to see what was taken. */
function keptStore() {
  const kept = new Map<string, string>();
  return { kept, cursorStore: { get: (key: string) => kept.get(key), set: (key: string, cursor: string) => void kept.set(key, cursor) } };
}

describe.each(['ws', 'sse'] as const)('followIterator over %s', (transport) => {
  const options = (extra: Partial<FollowIteratorOptions> = {}): FollowIteratorOptions => ({
    url: proxy.url,
    transport,
    getToken: defaultToken,
    deadAfterMs: 2_000,
    ...extra,
  });

  it('yields every message once and in order, across a dropped connection, and ends after the final one', async () => {
    const id = await storeTest(log, `iter-${transport}`, [{ sequence: 1 }, { sequence: 2 }]);
    const seen: Array<number | null> = [];
    const states: string[] = [];
    for await (const message of followIterator(id, options({ onState: (state) => void states.push(state.status) }))) {
      seen.push(message.sequence);
      if (message.sequence === 2) {
        proxy.cut();
        await append(id, 3);
        await append(id, 4, true);
      }
    }
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(states).toContain('reconnecting');
    expect(states.at(-1)).toBe('completed');
  });

  it('takes a message when the loop asks for the next one: left early, the next follow starts with it; aborted after it, with the one after', async () => {
    const id = await storeTest(log, `iter-leave-${transport}`, [{ sequence: 1 }, { sequence: 2 }, { sequence: 3 }]);
    const { kept, cursorStore } = keptStore();
    const first: FollowedMessage[] = [];
    for await (const message of followIterator(id, options({ cursorStore }))) {
      first.push(message);
      if (message.sequence === 2) break;
    }
    expect(first.map((m) => m.sequence)).toEqual([1, 2]);
    expect(kept.get(id)).toBe(first[0]?.cursor);

    const controller = new AbortController();
    const second: Array<number | null> = [];
    for await (const message of followIterator(id, options({ cursorStore, signal: controller.signal }))) {
      second.push(message.sequence);
      controller.abort();
    }
    expect(second).toEqual([2]);

    await append(id, 4, true);
    const third: Array<number | null> = [];
    for await (const message of followIterator(id, options({ cursorStore }))) third.push(message.sequence);
    expect(third).toEqual([3, 4]);
  });

  it('throws a FollowError with the code the follow failed on', async () => {
    const id = await storeTest(log, `iter-gone-${transport}`, [{ sequence: 1 }]);
    const seen: Array<number | null> = [];
    const loop = (async () => {
      for await (const message of followIterator(id, options())) {
        seen.push(message.sequence);
        await log.remove(id);
      }
    })();
    const error: unknown = await loop.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FollowError);
    expect(error).toMatchObject({ code: 'TEST_EXPIRED' });
    expect(seen).toEqual([1]);
  });
});

describe.each(['ws', 'sse'] as const)("follow's AbortSignal over %s", (transport) => {
  it('stops the follow when aborted, after the message being handed over was taken', async () => {
    const id = await storeTest(log, `abort-${transport}`, [{ sequence: 1 }]);
    const { kept, cursorStore } = keptStore();
    const controller = new AbortController();
    const seen: Array<number | null> = [];
    const following = follow(id, {
      url: proxy.url,
      transport,
      getToken: defaultToken,
      cursorStore,
      signal: controller.signal,
      onMessage: (message) => void seen.push(message.sequence),
    });
    await eventually(() => seen.length === 1, 20_000, 'the first message');
    controller.abort();
    await expect(following.done).resolves.toEqual({ status: 'stopped' });
    await append(id, 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toEqual([1]);
    expect(kept.get(id)).toBeDefined();
  });

  it('never connects with a signal aborted already', async () => {
    const id = await storeTest(log, `aborted-${transport}`, [{ sequence: 1 }]);
    const states: string[] = [];
    const following = follow(id, {
      url: proxy.url,
      transport,
      getToken: defaultToken,
      signal: AbortSignal.abort(),
      onMessage: () => undefined,
      onState: (state) => void states.push(state.status),
    });
    await expect(following.done).resolves.toEqual({ status: 'stopped' });
    expect(states).toEqual(['stopped']);
  });
});
