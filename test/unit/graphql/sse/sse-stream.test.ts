/**
 * The SSE stream guard over a hand-driven source: it pulls only when the response can take more,
 * ends with one last error result at expiry or when the source fails, names each result after its
 * event, and lets go of a waiting source on return().
 */
import type { ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { guardSseStream, type SseStreamOptions } from '../../../../src/graphql/sse/sse-stream.js';

/** A source whose next() waits until the test pushes a result, fails it, or ends it. */
function handSource() {
  const waiting: Array<{ resolve: (r: IteratorResult<ExecutionResult>) => void; reject: (e: unknown) => void }> = [];
  let pulls = 0;
  let returned = false;
  const source: AsyncIterator<ExecutionResult> = {
    next: () => {
      pulls += 1;
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return: async () => {
      returned = true;
      return { value: undefined, done: true };
    },
  };
  return {
    source,
    push: (value: ExecutionResult) => waiting.shift()?.resolve({ value, done: false }),
    fail: (error: unknown) => waiting.shift()?.reject(error),
    end: () => waiting.shift()?.resolve({ value: undefined, done: true }),
    get pulls() {
      return pulls;
    },
    get returned() {
      return returned;
    },
  };
}

const options = (overrides: Partial<SseStreamOptions> = {}) => {
  const ids: Array<string | undefined> = [];
  let n = 0;
  return {
    ids,
    options: {
      writable: () => Promise.resolve(),
      endsAt: Date.now() + 60_000,
      expired: () => ({ errors: [] as never[], data: { expired: true } }),
      failed: (error: unknown) => ({ data: { failed: String(error) } }),
      eventId: () => `c${++n}`,
      onResult: (id: string | undefined) => ids.push(id),
      ...overrides,
    } satisfies SseStreamOptions,
  };
};

describe('guardSseStream', () => {
  it('hands results on with their event ids, and ends when the source ends', async () => {
    const hand = handSource();
    const { ids, options: opts } = options();
    const stream = guardSseStream(hand.source, opts);
    const first = stream.next();
    await new Promise((r) => setImmediate(r));
    hand.push({ data: { n: 1 } });
    expect(await first).toEqual({ value: { data: { n: 1 } }, done: false });
    const second = stream.next();
    await new Promise((r) => setImmediate(r));
    hand.push({ data: { n: 2 } });
    await second;
    expect(ids).toEqual(['c1', 'c2']);
    const last = stream.next();
    await new Promise((r) => setImmediate(r));
    hand.end();
    await expect(last).resolves.toEqual({ value: undefined, done: true });
    await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
  });

  it('does not pull from the source until the response can take more', async () => {
    const hand = handSource();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const stream = guardSseStream(hand.source, options({ writable: () => gate }).options);
    const pending = stream.next();
    await new Promise((r) => setImmediate(r));
    expect(hand.pulls).toBe(0);
    open();
    await new Promise((r) => setImmediate(r));
    expect(hand.pulls).toBe(1);
    hand.push({ data: { n: 1 } });
    await expect(pending).resolves.toMatchObject({ done: false });
  });

  it('ends at expiry with the expired result, then done, and lets go of the source', async () => {
    const hand = handSource();
    const { ids, options: opts } = options({ endsAt: Date.now() + 50 });
    const stream = guardSseStream(hand.source, opts);
    await expect(stream.next()).resolves.toEqual({ value: { errors: [], data: { expired: true } }, done: false });
    await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
    expect(hand.returned).toBe(true);
    expect(ids).toEqual([undefined]);
  });

  it('ends at expiry while it waits for the response to take more, without reading the source', async () => {
    const hand = handSource();
    const never = new Promise<void>(() => undefined);
    const { ids, options: opts } = options({ endsAt: Date.now() + 50, writable: () => never });
    const stream = guardSseStream(hand.source, opts);
    await expect(stream.next()).resolves.toEqual({ value: { errors: [], data: { expired: true } }, done: false });
    await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
    expect(hand.pulls).toBe(0);
    expect(hand.returned).toBe(true);
    expect(ids).toEqual([undefined]);
  });

  it('gives the expired result to the next pull when the token expired while nothing was asked for', async () => {
    const hand = handSource();
    const { ids, options: opts } = options({ endsAt: Date.now() + 50 });
    const stream = guardSseStream(hand.source, opts);
    const first = stream.next();
    await new Promise((r) => setImmediate(r));
    hand.push({ data: { n: 1 } });
    expect(await first).toEqual({ value: { data: { n: 1 } }, done: false });
    // graphql-sse is busy writing: no pull while the token expires.
    await new Promise((r) => setTimeout(r, 120));
    expect(hand.pulls).toBe(1);
    await expect(stream.next()).resolves.toEqual({ value: { errors: [], data: { expired: true } }, done: false });
    await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
    expect(ids).toEqual(['c1', undefined]);
    expect(hand.returned).toBe(true);
  });

  it('turns a failing source into one last result', async () => {
    const hand = handSource();
    const { ids, options: opts } = options();
    const stream = guardSseStream(hand.source, opts);
    const pending = stream.next();
    await new Promise((r) => setImmediate(r));
    hand.fail(new Error('too slow'));
    await expect(pending).resolves.toEqual({ value: { data: { failed: 'Error: too slow' } }, done: false });
    await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
    expect(hand.returned).toBe(true);
    expect(ids).toEqual([undefined]);
  });

  it('ends a pull that waits for the response to take more on return(), and never reads the source', async () => {
    const hand = handSource();
    const never = new Promise<void>(() => undefined);
    const stream = guardSseStream(hand.source, options({ writable: () => never }).options);
    const pending = stream.next();
    await new Promise((r) => setImmediate(r));
    await stream.return?.();
    await expect(pending).resolves.toEqual({ value: undefined, done: true });
    expect(hand.pulls).toBe(0);
    expect(hand.returned).toBe(true);
  });

  it('rejects the pull when the response cannot be checked, and lets go of the source', async () => {
    const hand = handSource();
    const broken = new Error('no response');
    const stream = guardSseStream(hand.source, options({ writable: () => Promise.reject(broken) }).options);
    await expect(stream.next()).rejects.toBe(broken);
    expect(hand.returned).toBe(true);
  });

  it('ends a pull that waits for a quiet source on return(), and returns the source', async () => {
    const hand = handSource();
    const stream = guardSseStream(hand.source, options().options);
    const pending = stream.next();
    await new Promise((r) => setImmediate(r));
    await stream.return?.();
    await expect(pending).resolves.toEqual({ value: undefined, done: true });
    expect(hand.returned).toBe(true);
  });
});
