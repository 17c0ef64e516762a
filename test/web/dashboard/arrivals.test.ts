/** Arrivals per second for the dashboard's chart (web/dashboard/arrivals.ts). */
import { describe, expect, it } from 'vitest';
import { arrivalsPerSecond } from '../../../web/dashboard/arrivals.js';

const base = Date.UTC(2026, 10, 23, 9, 0, 0);
const at = (ms: number) => new Date(base + ms).toISOString();

describe('arrivalsPerSecond', () => {
  it('counts the messages received in each second, quiet seconds as zero, oldest first', () => {
    expect(arrivalsPerSecond([at(100), at(900), at(2_050), at(999), at(3_999)])).toEqual([
      { second: base, count: 3 },
      { second: base + 1000, count: 0 },
      { second: base + 2000, count: 1 },
      { second: base + 3000, count: 1 },
    ]);
  });

  it('is empty without messages and leaves out unparseable times', () => {
    expect(arrivalsPerSecond([])).toEqual([]);
    expect(arrivalsPerSecond(['not a time', at(1_500)])).toEqual([{ second: base + 1000, count: 1 }]);
  });

  it('keeps only the last maxSeconds seconds', () => {
    expect(arrivalsPerSecond([at(0), at(5_000), at(9_100)], 3)).toEqual([
      { second: base + 7000, count: 0 },
      { second: base + 8000, count: 0 },
      { second: base + 9000, count: 1 },
    ]);
  });
});
