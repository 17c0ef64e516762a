/**
 * How long the event loop was blocked lately, for the liveness probe. A loop blocked for a long
 * time answers no probe at all while it lasts; the probe that gets through afterwards must still
 * be able to say "this process is wedged" when that keeps happening (a CPU-bound loop, a heap
 * thrashing in the garbage collector). So the longest delay is kept for a window after it ended,
 * and a liveness probe fails while that delay is past the bound. One short stall is not enough to
 * restart the process: the orchestrator's failure threshold asks for several probes in a row.
 */
import { performance } from 'node:perf_hooks';
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
  /** The longest delay within the window (the one in progress included), in milliseconds. */
  recentMaxDelayMs(): number;
}

/** How often the watch's timer is due: its lateness is the event loop's delay. */
const TICK_MS = 100;

/**
 * Starts watching the event loop; dispose it to stop (its timer never keeps the process alive).
 * The delay is a timer's lateness, measured here rather than with `monitorEventLoopDelay`: that
 * histogram records a block only when its own timer fires after it, so a reset (needed for a
 * window) made before that moment loses the block, and a probe answered in the same turn as the
 * block's end would not see it.
 */
export function createEventLoopWatch(options: EventLoopWatchOptions): EventLoopWatch {
  const windowMs = options.windowMs ?? 10_000;
  // Delays past one tick, newest last; ordinary ticks are not kept.
  const delays: Array<{ at: number; delayMs: number }> = [];
  let lastTick = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const delayMs = now - lastTick - TICK_MS;
    lastTick = now;
    if (delayMs > TICK_MS) delays.push({ at: now, delayMs });
    while (delays.length > 0 && (delays[0]?.at ?? now) < now - windowMs) delays.shift();
  }, TICK_MS);
  timer.unref();

  const recentMaxDelayMs = () => {
    const now = performance.now();
    // The tick that is late right now counts too: a probe may be answered before the timer runs.
    const current = now - lastTick - TICK_MS;
    return Math.max(0, current, ...delays.filter((d) => d.at >= now - windowMs).map((d) => d.delayMs));
  };
  return {
    recentMaxDelayMs,
    check() {
      const delay = recentMaxDelayMs();
      return delay > options.maxDelayMs
        ? {
            ok: false,
            detail: `event loop blocked for ${Math.round(delay)} ms within the last ${Math.round(windowMs / 1000)} s (bound ${options.maxDelayMs} ms)`,
          }
        : { ok: true, detail: 'ok' };
    },
    async dispose() {
      clearInterval(timer);
    },
  };
}
