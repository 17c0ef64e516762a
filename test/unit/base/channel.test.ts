/**
 * The bounded channel behind every live stream (src/base/channel.ts): its bound, its end, its
 * failure and a consumer that leaves, each while a pull waits and while none does.
 */
import { describe, expect, it } from 'vitest';
import { createChannel } from '../../../src/base/channel.js';

const tooSlow = new Error('too slow');
function channel(limit = 3) {
  const closes: string[] = [];
  const ch = createChannel<number>({ limit, overflow: () => tooSlow, onClose: () => closes.push('closed') });
  return { ch, closes };
}
const pending = async <T>(promise: Promise<T>): Promise<boolean> => {
  const marker = Symbol('pending');
  return (await Promise.race([promise, new Promise((resolve) => setImmediate(() => resolve(marker)))])) === marker;
};

describe('createChannel', () => {
  it('hands values in order, to a waiting pull at once and to later pulls from its queue', async () => {
    const { ch } = channel();
    const waiting = ch.iterator.next();
    expect(await pending(waiting)).toBe(true);
    ch.push(1);
    expect(await waiting).toEqual({ value: 1, done: false });
    ch.push(2);
    ch.push(3);
    expect(ch.size()).toBe(2);
    expect(await ch.iterator.next()).toEqual({ value: 2, done: false });
    expect(await ch.iterator.next()).toEqual({ value: 3, done: false });
  });

  it('fails with the overflow error past its bound: what waited is dropped, every pull rejects, onClose runs once', async () => {
    const { ch, closes } = channel(2);
    expect(ch.push(1)).toBe(true);
    expect(ch.push(2)).toBe(true);
    expect(ch.push(3)).toBe(false);
    expect(ch.isClosed()).toBe(true);
    expect(ch.size()).toBe(0);
    await expect(ch.iterator.next()).rejects.toBe(tooSlow);
    await expect(ch.iterator.next()).rejects.toBe(tooSlow);
    expect(ch.push(4)).toBe(false);
    expect(closes).toEqual(['closed']);
  });

  it('rejects a waiting pull when it fails', async () => {
    const { ch } = channel();
    const waiting = ch.iterator.next();
    const boom = new Error('store gone');
    ch.fail(boom);
    await expect(waiting).rejects.toBe(boom);
  });

  it('ends after what waits when ended: the consumer drains, then done, and onClose runs on the drain', async () => {
    const { ch, closes } = channel();
    ch.push(1);
    ch.push(2);
    ch.end();
    expect(ch.isClosed()).toBe(true);
    expect(ch.push(3)).toBe(false);
    expect(closes).toEqual([]);
    expect(await ch.iterator.next()).toEqual({ value: 1, done: false });
    expect(await ch.iterator.next()).toEqual({ value: 2, done: false });
    expect(closes).toEqual(['closed']);
    expect(await ch.iterator.next()).toEqual({ value: undefined, done: true });
  });

  it('ended with an error: the consumer drains what waits, then every pull rejects with it, and a waiting pull at once', async () => {
    const gone = new Error('the test left the store');
    const { ch, closes } = channel();
    ch.push(1);
    ch.end(gone);
    expect(ch.push(2)).toBe(false);
    expect(await ch.iterator.next()).toEqual({ value: 1, done: false });
    expect(closes).toEqual(['closed']);
    await expect(ch.iterator.next()).rejects.toBe(gone);
    await expect(ch.iterator.next()).rejects.toBe(gone);
    const idle = channel();
    const waiting = idle.ch.iterator.next();
    idle.ch.end(gone);
    await expect(waiting).rejects.toBe(gone);
    expect(idle.closes).toEqual(['closed']);
  });

  it('ends a waiting pull at once when ended with nothing waiting', async () => {
    const { ch, closes } = channel();
    const waiting = ch.iterator.next();
    ch.end();
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(closes).toEqual(['closed']);
  });

  it('ends a pull waiting on a quiet channel when the consumer leaves (return), drops what waits, and takes nothing more', async () => {
    const { ch, closes } = channel();
    const waiting = ch.iterator.next();
    expect(await ch.iterator.return?.()).toEqual({ value: undefined, done: true });
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(ch.push(1)).toBe(false);
    expect(await ch.iterator.next()).toEqual({ value: undefined, done: true });
    await ch.iterator.return?.();
    expect(closes).toEqual(['closed']);
  });

  it('drops what waits when the consumer leaves, and throw() leaves too, rejecting with its error', async () => {
    const { ch, closes } = channel();
    ch.push(1);
    const error = new Error('consumer failed');
    await expect(ch.iterator.throw?.(error)).rejects.toBe(error);
    expect(ch.size()).toBe(0);
    expect(await ch.iterator.next()).toEqual({ value: undefined, done: true });
    expect(closes).toEqual(['closed']);
  });

  it('tells onPull when a pull starts to wait on the empty open channel, and only then', async () => {
    let pulls = 0;
    const ch = createChannel<number>({ limit: 2, overflow: () => tooSlow, onPull: () => void (pulls += 1) });
    ch.push(1);
    await expect(ch.iterator.next()).resolves.toEqual({ value: 1, done: false });
    expect(pulls).toBe(0);
    const waiting = ch.iterator.next();
    expect(pulls).toBe(1);
    // A producer on demand answers the pull it was told of.
    ch.push(2);
    await expect(waiting).resolves.toEqual({ value: 2, done: false });
    ch.end();
    await expect(ch.iterator.next()).resolves.toEqual({ value: undefined, done: true });
    expect(pulls).toBe(1);
  });

  it('fails with the error onPull throws: the pull rejects with it', async () => {
    const broken = new Error('no producer');
    const ch = createChannel<number>({
      limit: 2,
      overflow: () => tooSlow,
      onPull: () => {
        throw broken;
      },
    });
    await expect(ch.iterator.next()).rejects.toBe(broken);
    expect(ch.isClosed()).toBe(true);
  });

  it('is its own async iterator, so for await ends with the channel', async () => {
    const { ch } = channel();
    ch.push(1);
    ch.push(2);
    ch.end();
    const seen: number[] = [];
    for await (const value of ch.iterator) seen.push(value);
    expect(seen).toEqual([1, 2]);
  });

  it('hands what waits to a producer that takes over (takeAll), and stays open for it', async () => {
    const closed: string[] = [];
    const ch = createChannel<number>({ limit: 3, overflow: () => new Error('full'), onClose: () => closed.push('closed') });
    ch.push(1);
    ch.push(2);
    expect(ch.takeAll()).toEqual([1, 2]);
    expect(ch.size()).toBe(0);
    expect(ch.isClosed()).toBe(false);
    expect(closed).toEqual([]);
    // The bound counts from what is left.
    expect([ch.push(3), ch.push(4), ch.push(5)]).toEqual([true, true, true]);
  });
});
