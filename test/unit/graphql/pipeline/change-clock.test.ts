import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createChangeClock } from '../../../../src/graphql/pipeline/change-clock.js';

describe("the response cache's clock of changes", () => {
  it('says a test changed after a reading only when it was stamped after it', () => {
    const clock = createChangeClock({ maxIds: 10, maxBytes: 1e6 });
    clock.stamp('a');
    const started = clock.now;
    expect(clock.changedSince(['a', 'b'], started)).toBe(false);
    clock.stamp('b');
    expect(clock.changedSince(['a'], started)).toBe(false);
    expect(clock.changedSince(['a', 'b'], started)).toBe(true);
    // A reading taken after the change sees none.
    expect(clock.changedSince(['b'], clock.now)).toBe(false);
  });

  it('forgets everything past its bounds, and then refuses every reading taken before', () => {
    const clock = createChangeClock({ maxIds: 3, maxBytes: 1e6 });
    for (const id of ['a', 'b', 'c']) clock.stamp(id);
    const before = clock.now;
    clock.stamp('a'); // a stamp of a held id does not grow it
    expect(clock.changedSince(['b'], before)).toBe(false);
    clock.stamp('d'); // the fourth id: forgotten, all of them
    expect(clock.changedSince(['b'], before)).toBe(true);
    expect(clock.changedSince([], before)).toBe(true);
    const after = clock.now;
    expect(clock.changedSince(['a', 'd'], after)).toBe(false);
    clock.stamp('d');
    expect(clock.changedSince(['d'], after)).toBe(true);
  });

  it('counts the bytes of long ids', () => {
    const clock = createChangeClock({ maxIds: 1_000, maxBytes: 1_500 });
    const started = clock.now;
    clock.stamp('x'.repeat(256));
    clock.stamp('y'.repeat(256));
    expect(clock.changedSince(['z'], started)).toBe(false);
    clock.stamp('z'.repeat(256)); // 3 × (100 + 512) bytes: past 1,500
    expect(clock.changedSince(['z'], started)).toBe(true);
  });

  it('after forget, refuses what started before and keeps what starts after', () => {
    const clock = createChangeClock({ maxIds: 10, maxBytes: 1e6 });
    const started = clock.now;
    clock.forget();
    expect(clock.changedSince([], started)).toBe(true);
    expect(clock.changedSince(['a'], clock.now)).toBe(false);
  });

  it('answers as a table of every change would, whenever it has not forgotten', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom('a', 'b', 'c', 'd', '__proto__', 'constructor'), fc.constant(null)), { maxLength: 60 }), (steps) => {
        const clock = createChangeClock({ maxIds: 1_000, maxBytes: 1e6 });
        const last = new Map<string, number>();
        const readings: number[] = [];
        for (const step of steps) {
          if (step === null) readings.push(clock.now);
          else {
            clock.stamp(step);
            last.set(step, clock.now);
          }
        }
        for (const started of readings)
          for (const id of ['a', 'b', 'c', 'd', '__proto__', 'constructor']) expect(clock.changedSince([id], started)).toBe((last.get(id) ?? 0) > started);
      }),
    );
  });
});
