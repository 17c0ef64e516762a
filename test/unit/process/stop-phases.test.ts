/** The stop phases stop parts phase by phase, the parts of a phase together, and never twice. */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Disposable } from '../../../src/process/disposable.js';
import { createStopPhases, STOP_PHASES } from '../../../src/process/stop-phases.js';

interface LogLine {
  level: number;
  msg: string;
  part?: string;
  phase?: string;
  err?: { message: string };
}

function capture() {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as LogLine);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

/** A part that records when it starts and ends stopping, and ends only when released. */
function part(name: string, events: string[], options: { fail?: boolean } = {}) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  const disposable: Disposable = {
    async dispose() {
      calls += 1;
      events.push(`${name}:start`);
      await released;
      events.push(`${name}:end`);
      if (options.fail) throw new Error(`${name} could not stop`);
    },
  };
  return { disposable, release, calls: () => calls };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('stop phases', () => {
  it('runs the phases in order: drain, ingest, state, connections', () => {
    expect(STOP_PHASES).toEqual(['drain', 'ingest', 'state', 'connections']);
  });

  it('stops a phase only once every part of the one before has stopped, and the parts of a phase together', async () => {
    const events: string[] = [];
    const stopPhases = createStopPhases({ logger: capture().logger });
    // Registered out of order on purpose: the phase decides, not the order of registration.
    const redis = part('redis', events);
    const store = part('store', events);
    const issuer = part('issuer', events);
    const consumer = part('consumer', events);
    const http = part('http', events);
    stopPhases.register('connections', 'redis', redis.disposable);
    stopPhases.register('state', 'store', store.disposable);
    stopPhases.register('state', 'issuer', issuer.disposable);
    stopPhases.register('ingest', 'consumer', consumer.disposable);
    stopPhases.register('drain', 'http', http.disposable);

    const stopped = stopPhases.stop();
    await tick();
    expect(events).toEqual(['http:start']);
    http.release();
    await tick();
    expect(events).toEqual(['http:start', 'http:end', 'consumer:start']);
    consumer.release();
    await tick();
    // Both state parts are stopping at once, before either has finished.
    expect(events.slice(3)).toEqual(['consumer:end', 'store:start', 'issuer:start']);
    issuer.release();
    await tick();
    expect(events).not.toContain('redis:start');
    store.release();
    await tick();
    expect(events.slice(-1)).toEqual(['redis:start']);
    redis.release();
    await stopped;
    expect(events.slice(-1)).toEqual(['redis:end']);
  });

  it('logs a part that fails to stop and goes on with the others and the later phases', async () => {
    const events: string[] = [];
    const { lines, logger } = capture();
    const stopPhases = createStopPhases({ logger });
    const broken = part('producer', events, { fail: true });
    const consumer = part('consumer', events);
    const store = part('store', events);
    stopPhases.register('ingest', 'producer', broken.disposable);
    stopPhases.register('ingest', 'consumer', consumer.disposable);
    stopPhases.register('state', 'store', store.disposable);
    for (const p of [broken, consumer, store]) p.release();

    await expect(stopPhases.stop()).resolves.toBeUndefined();
    expect(events).toEqual(['producer:start', 'consumer:start', 'producer:end', 'consumer:end', 'store:start', 'store:end']);
    const failure = lines.find((l) => l.part === 'producer');
    expect(failure).toMatchObject({ level: 50, phase: 'ingest', err: { message: 'producer could not stop' } });
  });

  it('a part that throws before its first await is caught too', async () => {
    const { lines, logger } = capture();
    const stopPhases = createStopPhases({ logger });
    let stoppedAfter = false;
    stopPhases.register('drain', 'sync-throw', {
      dispose: () => {
        throw new Error('thrown at once');
      },
    });
    stopPhases.register('state', 'store', { dispose: async () => void (stoppedAfter = true) });
    await stopPhases.stop();
    expect(stoppedAfter).toBe(true);
    expect(lines.find((l) => l.part === 'sync-throw')?.err?.message).toBe('thrown at once');
  });

  it('stops each part once when stopped twice, and the second call waits for the first', async () => {
    const events: string[] = [];
    const stopPhases = createStopPhases({ logger: capture().logger });
    const http = part('http', events);
    const store = part('store', events);
    stopPhases.register('drain', 'http', http.disposable);
    stopPhases.register('state', 'store', store.disposable);

    const first = stopPhases.stop();
    const second = stopPhases.dispose();
    let secondDone = false;
    void second.then(() => (secondDone = true));
    http.release();
    await tick();
    expect(secondDone).toBe(false);
    store.release();
    await Promise.all([first, second]);
    expect(secondDone).toBe(true);
    await stopPhases.stop();
    expect([http.calls(), store.calls()]).toEqual([1, 1]);
  });

  it('stops at once a part registered after its phase began, and stop() waits for it', async () => {
    const events: string[] = [];
    const { lines, logger } = capture();
    const stopPhases = createStopPhases({ logger });
    const store = part('store', events);
    stopPhases.register('state', 'store', store.disposable);
    const stopped = stopPhases.stop();
    await tick();
    // Registered while the state phase runs: its own phase has begun, so it stops now.
    const lateDrain = part('late-http', events);
    stopPhases.register('drain', 'late-http', lateDrain.disposable);
    // Registered in a phase that has not begun yet: it waits for its turn.
    const redis = part('redis', events);
    stopPhases.register('connections', 'redis', redis.disposable);
    await tick();
    expect(events).toEqual(['store:start', 'late-http:start']);
    let done = false;
    void stopped.then(() => (done = true));
    store.release();
    redis.release();
    await tick();
    await tick();
    expect(events).toContain('redis:end');
    expect(done).toBe(false);
    lateDrain.release();
    await stopped;
    expect(lines.some((l) => l.part === 'late-http' && l.level === 40)).toBe(true);
  });

  it('stops at once a part registered after the whole stop has ended', async () => {
    const stopPhases = createStopPhases({ logger: capture().logger });
    await stopPhases.stop();
    const events: string[] = [];
    const late = part('late', events);
    late.release();
    stopPhases.register('connections', 'late', late.disposable);
    await tick();
    expect(events).toEqual(['late:start', 'late:end']);
    expect(late.calls()).toBe(1);
  });
});
