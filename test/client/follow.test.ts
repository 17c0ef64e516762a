/**
 * The client library's `follow`, over graphql-ws and SSE, against a real service through a TCP
 * proxy: each message handed to the application exactly once and in order across a network cut, a
 * silent network (dead-stream detection), a server restarted on the same state, a token renewed at
 * its expiry and a restart of the application with a persistent cursor store; and a follow that
 * stops for good, saying why, on what cannot be resumed. The service runs without a broker; its
 * state (a memory log) outlives a restart by being handed to the next instance.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  createMemoryCursorStore,
  createWebStorageCursorStore,
  follow,
  type FollowEnd,
  type FollowOptions,
  type FollowState,
  type FollowedMessage,
} from '@result-collection-service/client';
import type { IncomingMessage } from '../../src/domain/types.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { incoming, storedTest as storeTest } from '../log/storage-contract.js';
import { eventually } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { freePort } from '../support/service.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { defaultToken, mintToken } from '../support/tokens.js';

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

const storedTest = (label: string, messages: ReadonlyArray<Partial<IncomingMessage>> = []) => storeTest(log, label, messages);

const append = (id: string, ...sequences: number[]) => log.append(sequences.map((sequence) => incoming(id, { sequence })));
const appendFinal = (id: string, sequence: number) => log.append([incoming(id, { sequence, final: true })]);

/** A follow whose messages and states are recorded. */
function recorded(id: string, options: Partial<FollowOptions> & Pick<FollowOptions, 'transport'>) {
  const messages: FollowedMessage[] = [];
  const states: FollowState[] = [];
  const following = follow(id, {
    url: proxy.url,
    getToken: defaultToken,
    deadAfterMs: 2_000,
    onMessage: (message) => void messages.push(message),
    onState: (state) => void states.push(state),
    ...options,
  });
  const sequences = () => messages.map((m) => m.sequence);
  const reached = (n: number) => eventually(() => messages.length >= n, 20_000, `${n} messages, got ${messages.length}`);
  return { following, messages, states, sequences, reached };
}

const statuses = (states: readonly FollowState[]) => states.map((s) => s.status);

describe.each(['ws', 'sse'] as const)('follow over %s', (transport) => {
  it('hands every message once, stored then live, confirms the guarantee it was granted, and completes after the final one', async () => {
    const id = await storedTest('plain', [{ sequence: 1 }, { sequence: 2 }]);
    const run = recorded(id, { transport });
    await run.reached(2);
    await append(id, 3);
    await appendFinal(id, 4);
    await expect(run.following.done).resolves.toEqual({ status: 'completed' });
    expect(run.sequences()).toEqual([1, 2, 3, 4]);
    expect(run.states[0]).toEqual({ status: 'connecting', attempt: 1 });
    expect(run.states).toContainEqual({ status: 'live', delivery: { guarantee: 'at-least-once', store: 'memory', durable: 'none' } });
    expect(run.states.at(-1)).toEqual({ status: 'completed' });
  });

  it('resumes after the last message taken when the network drops the connection: nothing lost, nothing twice', async () => {
    const id = await storedTest('cut', [{ sequence: 1 }, { sequence: 2 }]);
    const run = recorded(id, { transport });
    await run.reached(2);
    proxy.cut();
    await append(id, 3, 4);
    await run.reached(4);
    proxy.cut();
    await append(id, 5);
    await appendFinal(id, 6);
    await expect(run.following.done).resolves.toEqual({ status: 'completed' });
    expect(run.sequences()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(statuses(run.states).filter((s) => s === 'reconnecting').length).toBeGreaterThanOrEqual(2);
  });

  it('takes a stream that goes silent (no message, no keep-alive) for dead, and resumes on a new connection', async () => {
    const id = await storedTest('silent', [{ sequence: 1 }]);
    const run = recorded(id, { transport, deadAfterMs: 1_500 });
    await run.reached(1);
    proxy.silence();
    await append(id, 2);
    await appendFinal(id, 3);
    await expect(run.following.done).resolves.toEqual({ status: 'completed' });
    expect(run.sequences()).toEqual([1, 2, 3]);
    expect(run.states).toContainEqual(expect.objectContaining({ status: 'reconnecting', reason: 'nothing received for 1500 ms' }));
  });

  it('resumes on the server started again on the same state (another port behind the same address)', async () => {
    const id = await storedTest('restart', [{ sequence: 1 }, { sequence: 2 }]);
    const run = recorded(id, { transport });
    await run.reached(2);
    await svc.stop();
    await append(id, 3);
    svc = await startPipelineService({ log });
    proxy.retarget(Number(new URL(svc.url).port));
    await appendFinal(id, 4);
    await expect(run.following.done).resolves.toEqual({ status: 'completed' });
    expect(run.sequences()).toEqual([1, 2, 3, 4]);
  });

  it('renews the token when the service ends the stream at its expiry, and resumes with the new one', async () => {
    const id = await storedTest('renew', [{ sequence: 1 }]);
    let minted = 0;
    const getToken = () => {
      minted += 1;
      return mintToken({}, { expiresInSeconds: 2 });
    };
    const run = recorded(id, { transport, getToken });
    await run.reached(1);
    await eventually(() => minted >= 2, 10_000, 'a second token');
    await append(id, 2);
    await appendFinal(id, 3);
    await expect(run.following.done).resolves.toEqual({ status: 'completed' });
    expect(run.sequences()).toEqual([1, 2, 3]);
    expect(run.states).toContainEqual(expect.objectContaining({ status: 'reconnecting' }));
  });

  it('resumes after the last message a previous run took, with a persistent cursor store (a page reloaded)', async () => {
    const id = await storedTest('reload', [{ sequence: 1 }, { sequence: 2 }, { sequence: 3 }]);
    const kept = new Map<string, string>();
    const storage = {
      getItem: (key: string) => kept.get(key) ?? null,
      setItem: (key: string, value: string) => void kept.set(key, value),
      removeItem: (key: string) => void kept.delete(key),
    };
    const cursorStore = createWebStorageCursorStore({ storage });
    const first = recorded(id, { transport, cursorStore });
    await first.reached(3);
    await first.following.stop();
    await expect(first.following.done).resolves.toEqual({ status: 'stopped' });
    await append(id, 4);
    const second = recorded(id, { transport, cursorStore });
    await second.reached(1);
    await appendFinal(id, 5);
    await expect(second.following.done).resolves.toEqual({ status: 'completed' });
    expect([...first.sequences(), ...second.sequences()]).toEqual([1, 2, 3, 4, 5]);
    // The test's cursor, and the list of the tests the store keeps cursors of (its bound).
    expect([...kept.keys()].sort()).toEqual(['rcs-cursor:#order', `rcs-cursor:${id}`]);
    expect(JSON.parse(kept.get('rcs-cursor:#order') ?? '')).toEqual([id]);
  });

  it("resumes from the cursor it kept whichever case the application spells the test's UUID in", async () => {
    const id = randomUUID();
    await log.create({ correlationId: id, input: null, owner: 'tester' });
    await append(id, 1, 2);
    const cursorStore = createMemoryCursorStore();
    const first = recorded(id.toUpperCase(), { transport, cursorStore });
    await first.reached(2);
    await first.following.stop();
    expect(await cursorStore.get(id)).toBeDefined();
    await append(id, 3);
    const second = recorded(id, { transport, cursorStore });
    await second.reached(1);
    await appendFinal(id, 4);
    await expect(second.following.done).resolves.toEqual({ status: 'completed' });
    expect([...first.sequences(), ...second.sequences()]).toEqual([1, 2, 3, 4]);
  });

  it('still resumes from a cursor an earlier release kept under the spelling the application used', async () => {
    const id = randomUUID();
    await log.create({ correlationId: id, input: null, owner: 'tester' });
    await append(id, 1, 2);
    const upper = id.toUpperCase();
    const cursorStore = createMemoryCursorStore();
    const first = recorded(id, { transport, cursorStore });
    await first.reached(2);
    await first.following.stop();
    // The same cursor as 1.0.0 kept it: under the application's spelling only.
    const earlier = createMemoryCursorStore();
    await earlier.set(upper, (await cursorStore.get(id)) as string);
    await append(id, 3);
    const second = recorded(upper, { transport, cursorStore: earlier });
    await second.reached(1);
    await appendFinal(id, 4);
    await expect(second.following.done).resolves.toEqual({ status: 'completed' });
    expect(second.sequences()).toEqual([3, 4]);
    expect(await earlier.get(id)).toBeDefined();
  });

  it('does not take a message its handler failed on: the follow fails, and the next one starts with that message', async () => {
    const id = await storedTest('handler', [{ sequence: 1 }, { sequence: 2 }]);
    const kept = new Map<string, string>();
    const cursorStore = { get: (key: string) => kept.get(key), set: (key: string, cursor: string) => void kept.set(key, cursor) };
    const failing = recorded(id, {
      transport,
      cursorStore,
      onMessage: (message) => {
        if (message.sequence === 2) throw new Error('the page could not show it');
      },
    });
    await expect(failing.following.done).resolves.toEqual({ status: 'failed', code: 'HANDLER_FAILED', message: 'the page could not show it' });
    await appendFinal(id, 3);
    const again = recorded(id, { transport, cursorStore });
    await expect(again.following.done).resolves.toEqual({ status: 'completed' });
    expect(again.sequences()).toEqual([2, 3]);
  });

  it('fails with CURSOR_STORE_FAILED when the cursor of a taken message cannot be kept, rather than go on unsure', async () => {
    const id = await storedTest('store-fails', [{ sequence: 1 }, { sequence: 2 }]);
    const cursorStore = {
      get: () => undefined,
      set: () => {
        throw new Error('the quota is exceeded');
      },
    };
    const run = recorded(id, { transport, cursorStore });
    await expect(run.following.done).resolves.toEqual({ status: 'failed', code: 'CURSOR_STORE_FAILED', message: 'the quota is exceeded' });
    expect(run.sequences()).toEqual([1]);
  });

  it('stops only once the message being handed over was taken and its cursor kept', async () => {
    const id = await storedTest('stop-mid', [{ sequence: 1 }]);
    const kept = new Map<string, string>();
    const cursorStore = { get: (key: string) => kept.get(key), set: (key: string, cursor: string) => void kept.set(key, cursor) };
    let release: () => void = () => undefined;
    let handling: (() => void) | undefined;
    const started = new Promise<void>((resolve) => (handling = resolve));
    const run = recorded(id, {
      transport,
      cursorStore,
      onMessage: () =>
        new Promise<void>((resolve) => {
          release = resolve;
          handling?.();
        }),
    });
    await started;
    let stopped = false;
    const stopping = run.following.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(kept.get(id)).toBeDefined();
    await expect(run.following.done).resolves.toEqual({ status: 'stopped' });
  });

  it('stops for good, saying why, on a cursor whose test is gone (CURSOR_EXPIRED), never starting over', async () => {
    const id = await storedTest('gone', [{ sequence: 1 }, { sequence: 2 }]);
    const kept = new Map<string, string>();
    const cursorStore = { get: (key: string) => kept.get(key), set: (key: string, cursor: string) => void kept.set(key, cursor) };
    const first = recorded(id, { transport, cursorStore });
    await first.reached(2);
    await first.following.stop();
    await log.remove(id);
    const again = recorded(id, { transport, cursorStore });
    const end: FollowEnd = await again.following.done;
    expect(end).toMatchObject({ status: 'failed', code: 'CURSOR_EXPIRED' });
    expect(again.messages).toEqual([]);
  });

  it('stops for good, saying why, when its test leaves the store while it follows it (TEST_EXPIRED), after what it was given', async () => {
    const id = await storedTest('leaves', [{ sequence: 1 }, { sequence: 2 }]);
    const run = recorded(id, { transport });
    await run.reached(2);
    await log.remove(id);
    await expect(run.following.done).resolves.toMatchObject({ status: 'failed', code: 'TEST_EXPIRED' });
    expect(run.sequences()).toEqual([1, 2]);
    expect(statuses(run.states)).not.toContain('reconnecting');
  });

  it('stops at once when told to while it waits to retry', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    let waited = 0;
    let stoppedAt = 0;
    const following = follow('any', {
      url: closed,
      transport,
      getToken: defaultToken,
      onMessage: () => undefined,
      onState: (state) => {
        if (state.status === 'reconnecting' && state.waitMs >= 4_000 && waited === 0) {
          waited = state.waitMs;
          stoppedAt = Date.now();
          void following.stop();
        }
      },
    });
    await expect(following.done).resolves.toEqual({ status: 'stopped' });
    expect(waited).toBeGreaterThanOrEqual(4_000);
    // It did not sit out the wait it was in when stopped.
    expect(Date.now() - stoppedAt).toBeLessThan(waited);
  });

  it('stops for good on a test it may not see, and when the token keeps being refused', async () => {
    const id = await storedTest('not-mine', [{ sequence: 1 }]);
    const stranger = recorded(id, { transport, getToken: () => mintToken({ sub: 'someone-else' }) });
    await expect(stranger.following.done).resolves.toMatchObject({ status: 'failed', code: 'NOT_FOUND' });
    const refused = recorded(id, { transport, getToken: () => mintToken({}, { secret: 'a-secret-the-service-does-not-know!!' }), maxRetryWaitMs: 50 });
    await expect(refused.following.done).resolves.toMatchObject({ status: 'failed', code: 'UNAUTHENTICATED' });
    expect(stranger.messages).toEqual([]);
  });
});

describe('follow over ws with the ws package as its WebSocket (Node before the global one, or by choice)', () => {
  it('takes a connection whose upgrade never answers for dead and tries again, without an unhandled error from the socket it closes while connecting', async () => {
    // Takes the TCP connection, never answers the upgrade: every socket stays CONNECTING until the library closes it.
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const states: FollowState[] = [];
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    const following = follow('any', {
      url: `http://127.0.0.1:${(silent.address() as { port: number }).port}`,
      transport: 'ws',
      webSocketImpl: WebSocket,
      getToken: defaultToken,
      deadAfterMs: 300,
      maxRetryWaitMs: 50,
      onMessage: () => undefined,
      onState: (state) => void states.push(state),
    });
    // The ws package emits "closed before the connection was established" as a Node 'error' event on
    // each such close: unlistened, it would be an uncaught exception (vitest fails the run on one).
    await eventually(() => states.filter((s) => s.status === 'reconnecting').length >= 3, 10_000, 'three attempts taken for dead');
    await following.stop();
    await expect(following.done).resolves.toEqual({ status: 'stopped' });
    process.off('uncaughtException', onUncaught);
    expect(uncaught).toEqual([]);
    expect(states.filter((s) => s.status === 'reconnecting').every((s) => s.status === 'reconnecting' && /nothing received/.test(s.reason))).toBe(true);
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });
});
