/**
 * A timer that fires when nothing happened for a while: each sign of life (`touch`) starts the wait
 * again. It is how a stream that went silent (a cut network that sends no reset) is noticed.
 */

/** A running watchdog. */
export interface Watchdog {
  touch(): void;
  stop(): void;
}

/** Calls `fire` once, when `ms` pass without a `touch`. */
export function createWatchdog(ms: number, fire: () => void): Watchdog {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const arm = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      stopped = true;
      fire();
    }, ms);
  };
  arm();
  return {
    touch: () => {
      if (!stopped) arm();
    },
    stop: () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
