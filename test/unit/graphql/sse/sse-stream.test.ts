/**
 * How an SSE subscription ends around the hub's subscription (whose results do not pass here: the
 * hub writes the pushes itself): with the hub's end, with one last error result at the token's
 * expiry or when the source fails, and leaving the hub whenever it ends. The hub's subscription is a
 * pure seam here (its end, which the test settles, and its leaving, which the test records).
 */
import type { ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { endingSseStream } from '../../../../src/graphql/sse/sse-stream.js';

const expired: ExecutionResult = { data: null, extensions: { why: 'expired' } };
const failed = (error: unknown): ExecutionResult => ({ data: null, extensions: { why: (error as Error).message } });

/** A stand-in for the hub's subscription: it is over when the test ends or fails it, and says whether it was left. */
function hubSubscription() {
  let returned = false;
  let settle!: { end(): void; fail(error: unknown): void };
  const ended = new Promise<void>((resolve, reject) => (settle = { end: resolve, fail: reject }));
  ended.catch(() => undefined);
  const subscription = {
    ended,
    leave: () => {
      returned = true;
      settle.end();
    },
  };
  return { subscription, end: () => settle.end(), fail: (error: unknown) => settle.fail(error), returned: () => returned };
}

async function drain(stream: AsyncIterator<ExecutionResult>): Promise<ExecutionResult[]> {
  const out: ExecutionResult[] = [];
  for (let next = await stream.next(); next.done !== true; next = await stream.next()) out.push(next.value);
  return out;
}

describe('endingSseStream', () => {
  it('ends when the hub’s subscription ends, with nothing of its own', async () => {
    const hub = hubSubscription();
    const stream = endingSseStream(hub.subscription, { endsAt: Date.now() + 60_000, expired: () => expired, failed });
    hub.end();
    expect(await drain(stream)).toEqual([]);
  });

  it('ends at the expiry with the expired result, then done, and leaves the hub', async () => {
    const hub = hubSubscription();
    const stream = endingSseStream(hub.subscription, { endsAt: Date.now() + 50, expired: () => expired, failed });
    expect(await drain(stream)).toEqual([expired]);
    expect(hub.returned()).toBe(true);
  });

  it('turns a failing source into one last result', async () => {
    const hub = hubSubscription();
    const stream = endingSseStream(hub.subscription, { endsAt: Date.now() + 60_000, expired: () => expired, failed });
    hub.fail(new Error('store down'));
    expect(await drain(stream)).toEqual([{ data: null, extensions: { why: 'store down' } }]);
  });

  it('leaves the hub when graphql-sse returns it (the client went away), and never expires afterwards', async () => {
    const hub = hubSubscription();
    const stream = endingSseStream(hub.subscription, { endsAt: Date.now() + 30, expired: () => expired, failed });
    const waiting = stream.next();
    await stream.return?.();
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(hub.returned()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });
});
