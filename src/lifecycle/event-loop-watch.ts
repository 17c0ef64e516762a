/**
 * How long the event loop was blocked lately, for the liveness probe. A loop blocked for a long
 * time answers no probe at all while it lasts; the probe that gets through afterwards must still
 * be able to say "this process is wedged" when that keeps happening (a CPU-bound loop, a heap
 * thrashing in the garbage collector). So the longest delay is kept for a window after it ended,
 * and a liveness probe fails while that delay is past the bound. One short stall is not enough to
 * restart the process: the orchestrator's failure threshold asks for several probes in a row.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Disposable } from './disposable.js';

/** Options of {@link createEventLoopWatch}. */
export interface EventLoopWatchOptions {
  /** Longest tolerated delay of the event loop. */
  readonly maxDelayMs: number;
  /** How long a delay past the bound is remembered after it ended. Default 10 s (a liveness probe's usual period). */
  readonly windowMs?: number;
}

/** The event loop's recent delays, as liveness sees them. */
export interface EventLoopWatch extends Disposable {
  /** `ok`, or how long the loop was blocked within the window when that was past the bound. */
  check(): { readonly ok: boolean; readonly detail: string };
  /** The longest delay within the window, in milliseconds. */
  recentMaxDelayMs(): number;
}

/** How often the histogram's maximum is moved into the window. */
const SAMPLE_MS = 500;

/** Starts watching the event loop; dispose it to stop (its timer never keeps the process alive). */
export function createEventLoopWatch(options: EventLoopWatchOptions): EventLoopWatch {
  const windowMs = options.windowMs ?? 10_000;
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  histogram.enable();
  // Maxima per sample period, newest last. A blocked loop delays the timer too, so the period
  // that contains a block is sampled as soon as the loop runs again.
  const samples: Array<{ at: number; maxMs: number }> = [];
  const sample = () => {
    const now = Date.now();
    samples.push({ at: now, maxMs: histogram.max / 1e6 });
    histogram.reset();
    while (samples.length > 0 && (samples[0]?.at ?? now) < now - windowMs) samples.shift();
  };
  const timer = setInterval(sample, SAMPLE_MS);
  timer.unref();

  const recentMaxDelayMs = () => {
    sample();
    return Math.max(0, ...samples.map((s) => s.maxMs));
  };
  return {
    recentMaxDelayMs,
    check() {
      const delay = recentMaxDelayMs();
      return delay > options.maxDelayMs
        ? { ok: false, detail: `event loop blocked for ${Math.round(delay)} ms within the last ${Math.round(windowMs / 1000)} s (bound ${options.maxDelayMs} ms)` }
        : { ok: true, detail: 'ok' };
    },
    async dispose() {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
