/** The consumer's state as readiness sees it, driven by a clock instead of a broker. */
import { describe, expect, it } from 'vitest';
import { createConsumerStateMachine, type ConsumerFault } from '../../../src/ingest/consumer-state-machine.js';

function setup(sessionTimeoutMs = 30_000) {
  let time = 1_000_000;
  let fault: ConsumerFault | undefined;
  const machine = createConsumerStateMachine({ sessionTimeoutMs, fault: () => fault, now: () => time });
  return {
    machine,
    advance: (ms: number) => (time += ms),
    now: () => time,
    setFault: (f: ConsumerFault | undefined) => (fault = f),
  };
}

describe('createConsumerStateMachine', () => {
  it('starts idle and reports the states it enters, with their reason and time', () => {
    const { machine, advance, now } = setup();
    expect(machine.state().state).toBe('idle');
    machine.enter('connecting');
    advance(50);
    machine.enter('joined');
    expect(machine.state()).toEqual({ state: 'joined', since: now() });
    machine.enter('crashed', 'leader moved');
    expect(machine.state()).toEqual({ state: 'crashed', since: now(), reason: 'leader moved' });
  });

  it('turns joined into stalled after a session timeout without an answer from the broker, and back on contact', () => {
    const { machine, advance, now } = setup(6000);
    machine.enter('joined');
    const joinedAt = now();
    advance(5000);
    expect(machine.state().state).toBe('joined');
    advance(2000);
    expect(machine.state()).toEqual({ state: 'stalled', since: joinedAt, reason: 'no answer from the broker for 7 s' });
    machine.contact();
    expect(machine.state().state).toBe('joined');
    // Only a joined member can be stalled: a rebalance in progress is reported as it is.
    machine.enter('rebalancing');
    advance(60_000);
    expect(machine.state().state).toBe('rebalancing');
  });

  it('reports a fault as crashed while it lasts, except once stopped', () => {
    const { machine, setFault } = setup();
    machine.enter('joined');
    setFault({ reason: 'cannot read zstd-compressed records', since: 42 });
    expect(machine.state()).toEqual({ state: 'crashed', since: 42, reason: 'cannot read zstd-compressed records' });
    setFault(undefined);
    expect(machine.state().state).toBe('joined');
    setFault({ reason: 'still broken', since: 43 });
    machine.enter('stopped');
    expect(machine.state().state).toBe('stopped');
  });

  it('waits longer before each replacement, up to 10 s, and starts over after a join', () => {
    const { machine } = setup();
    const delays = Array.from({ length: 7 }, () => machine.replaced('protocol error').delayMs);
    expect(delays).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
    expect(machine.state()).toMatchObject({ state: 'crashed', reason: 'protocol error' });
    machine.enter('joined');
    expect(machine.replaced('again').delayMs).toBe(1000);
  });

  it('while a fault lasts, backs off up to a minute, names the fault, and a join does not reset the backoff', () => {
    const { machine, setFault } = setup();
    setFault({ reason: 'cannot read lz4-compressed records', since: 1 });
    const delays = Array.from({ length: 8 }, () => machine.replaced('kafkajs error').delayMs);
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    expect(machine.replaced('kafkajs error').reason).toBe('cannot read lz4-compressed records');
    machine.enter('joined');
    expect(machine.replaced('kafkajs error').delayMs).toBe(60_000);
    // Fetches decode again: the next failure starts from the shortest pause.
    setFault(undefined);
    machine.recovered();
    expect(machine.replaced('other').delayMs).toBe(1000);
  });

  it('counts the states it entered and the time since the last fetch, for the metrics that replace routing on them', () => {
    const { machine, advance } = setup();
    advance(4000);
    // Before the first fetch the age counts from the start.
    expect(machine.activity()).toMatchObject({ lastFetchAt: undefined, secondsSinceFetch: 4, joinedOnce: false });
    machine.enter('connecting');
    machine.enter('joined');
    machine.fetched();
    advance(1500);
    machine.enter('rebalancing');
    machine.enter('joined');
    machine.contact(); // a heartbeat is not a fetch
    advance(500);
    const activity = machine.activity();
    expect(activity.secondsSinceFetch).toBe(2);
    expect(activity.joinedOnce).toBe(true);
    expect(activity.entered).toEqual({ idle: 0, connecting: 1, joined: 2, stalled: 0, rebalancing: 1, crashed: 0, stopped: 0 });
  });

  it('measures the silence from the last sign of life (an answer, a fetch, any state entered) and counts a silent consumer replaced as stalled', () => {
    const { machine, advance } = setup();
    advance(3000);
    expect(machine.silentMs()).toBe(3000); // from the start
    machine.enter('connecting');
    expect(machine.silentMs()).toBe(0);
    advance(2000);
    machine.contact();
    advance(1000);
    expect(machine.silentMs()).toBe(1000);
    machine.fetched();
    advance(500);
    machine.enter('crashed', 'coordinator not available'); // kafkajs restarting after a failure is alive
    advance(700);
    expect(machine.silentMs()).toBe(700);
    const { delayMs, reason } = machine.replaced('no sign of life', 'silent');
    expect({ delayMs, reason }).toEqual({ delayMs: 1000, reason: 'no sign of life' });
    expect(machine.silentMs()).toBe(0);
    machine.replaced('protocol error');
    expect(machine.activity().entered).toMatchObject({ stalled: 1, crashed: 3 });
  });
});
