/** The stall watch over a state machine driven by a clock: it fires once per silence past its limit. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConsumerStateMachine } from '../../../src/ingest/consumer-state-machine.js';
import { defaultStallLimitMs, silenceError, watchForStall } from '../../../src/ingest/consumer-stall-watch.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('watchForStall', () => {
  it('replaces a consumer silent past the limit once per silence, never one that keeps answering, and stops when disposed', async () => {
    vi.useFakeTimers();
    const machine = createConsumerStateMachine({ sessionTimeoutMs: 30_000, fault: () => undefined, now: Date.now });
    machine.enter('joined');
    const stalls: number[] = [];
    const watch = watchForStall({
      machine,
      limitMs: 10_000,
      onStall: (silentMs) => stalls.push(silentMs) && machine.replaced('silent', 'silent'),
    });
    // Heartbeats every second for a minute: never silent.
    for (let i = 0; i < 60; i++) {
      vi.advanceTimersByTime(1000);
      machine.contact();
    }
    expect(stalls).toEqual([]);
    // Then nothing: fired once the limit passed (checked every tenth of it), and the replacement
    // (a sign of life) starts the count again.
    vi.advanceTimersByTime(11_000);
    expect(stalls).toHaveLength(1);
    expect(stalls[0]).toBeGreaterThan(10_000);
    vi.advanceTimersByTime(5000);
    expect(stalls).toHaveLength(1);
    vi.advanceTimersByTime(6000);
    expect(stalls).toHaveLength(2);
    expect(machine.activity().entered.stalled).toBe(2);
    await watch.dispose();
    vi.advanceTimersByTime(60_000);
    expect(stalls).toHaveLength(2);
  });

  it('allows two session timeouts and a rebalance by default, and says what happened in the error', () => {
    expect(defaultStallLimitMs(30_000, 60_000)).toBe(120_000);
    const error = silenceError(125_400);
    expect(error.code).toBe('BROKER_UNAVAILABLE');
    expect(error.message).toBe('no sign of life from the Kafka client for 125 s (no fetch, heartbeat or state change): replaced');
  });
});
