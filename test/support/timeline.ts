import { performance } from 'node:perf_hooks';

/**
 * A scenario against a real clock, such as a TTL Redis counts on its own server, can assert
 * "still there" only if its read ended before the TTL ran out since the write that set it began.
 * On a loaded machine a timer fires late and a command waits for the CPU, so a fixed schedule of
 * sleeps is a flaky test. The scenario measures its own timeline instead: `within` throws this when
 * the machine did not keep to it, and `onTimeline` runs the scenario again with fresh data.
 */
export class LateTimeline extends Error {}

/** The monotonic clock of one attempt and its one check. */
export interface Timeline {
  /** Milliseconds on the monotonic clock. */
  now(): number;
  /** Throws {@link LateTimeline} unless less than `ms` has passed since `since`: what follows holds only on time. */
  within(since: number, ms: number, what: string): void;
}

const timeline: Timeline = {
  now: () => performance.now(),
  within(since, ms, what) {
    const took = performance.now() - since;
    if (took >= ms) throw new LateTimeline(`${what} took ${Math.round(took)} ms of ${ms}`);
  },
};

/**
 * Runs `scenario` until one attempt keeps to its timeline (its other failures fail at once), and
 * fails naming every late step when none of `attempts` does. Each attempt must use fresh data.
 */
export async function onTimeline(scenario: (timeline: Timeline) => Promise<void>, attempts = 4): Promise<void> {
  const late: string[] = [];
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      await scenario(timeline);
      return;
    } catch (error) {
      if (!(error instanceof LateTimeline)) throw error;
      late.push(error.message);
    }
  }
  throw new Error(`the machine kept to the scenario's timeline in none of ${attempts} attempts: ${late.join('; ')}`);
}
