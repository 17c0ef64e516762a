/**
 * The response cache's clock of changes (response-cache.ts): each test's last change stamped on
 * one counter, so that a response computed while a test it read changed is not kept.
 *
 * It is stamped once for every test a stored batch changed, so at the rate results arrive: a
 * `Map` reset whole when it grows past its bounds, rather than an LRU that reorders itself on every
 * stamp (that bookkeeping was about 3 % of a busy push window, bench/README.md). Forgetting raises
 * the floor: a response that started before it is refused as if everything it read had changed.
 */

/** The clock (see the module's comment). */
export interface ChangeClock {
  /** The reading now: a request notes it when it arrives. */
  readonly now: number;
  /** Stamps a change of the test `id`. */
  stamp(id: string): void;
  /** Forgets every change so far: nothing that started before now may be kept. */
  forget(): void;
  /** Whether a test of `ids` changed after the reading `started` (true when that is forgotten). */
  changedSince(ids: Iterable<string>, started: number): boolean;
}

/** Bounds of {@link createChangeClock}. */
export interface ChangeClockOptions {
  /** Most tests stamped before everything is forgotten. */
  readonly maxIds: number;
  /** Most bytes of stamps (an id is up to 256 characters) before everything is forgotten. */
  readonly maxBytes: number;
}

/** Bytes one stamp holds, about: its map slot and its id (UTF-16). */
const stampBytes = (id: string) => 100 + 2 * id.length;

/** Creates a clock at zero, with nothing stamped. */
export function createChangeClock(options: ChangeClockOptions): ChangeClock {
  const stamps = new Map<string, number>();
  let clock = 0;
  let floor = 0;
  let bytes = 0;
  return {
    get now() {
      return clock;
    },
    stamp(id) {
      const size = stamps.size;
      stamps.set(id, ++clock);
      if (stamps.size === size) return;
      bytes += stampBytes(id);
      if (stamps.size > options.maxIds || bytes > options.maxBytes) {
        stamps.clear();
        bytes = 0;
        floor = clock;
      }
    },
    forget() {
      stamps.clear();
      bytes = 0;
      floor = ++clock;
    },
    changedSince(ids, started) {
      if (floor > started) return true;
      for (const id of ids) if ((stamps.get(id) ?? 0) > started) return true;
      return false;
    },
  };
}
