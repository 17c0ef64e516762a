/**
 * Writes that leave together, the one scheme of held writes of every connection. Every frame or
 * event written to a connection in one turn of the event loop (the hub's pushes, and graphql-ws's
 * protocol frames through `hold`) leaves in one write: the connection is corked at its first frame and uncorked when
 * the turn's I/O is done (`setImmediate`), so a broker batch of many records costs each socket one
 * system call, not one per record. When the process is busy (its event loop was more than
 * `busyUtilization` occupied over the last interval), a connection's frames wait up to
 * `maxDelayMs` more to leave with the next ones: under overload each write carries more frames, so
 * the cost per push falls instead of rising. At low load nothing waits.
 *
 * A writer that keeps a connection's writes itself until then (`gather`: the WebSocket sink's frames,
 * framed into one buffer, `ws/held-frames.ts`) is flushed at the same moment, before the
 * connections are uncorked, so its bytes leave in the same write as whatever else was held.
 */
import { performance } from 'node:perf_hooks';
import type { Writable } from 'node:stream';

/** The coalescer of one process. */
export interface WriteCoalescer {
  /** Writes `data` to `connection` in this turn's (or, when busy, the next few milliseconds') write. */
  write(connection: Writable, data: Buffer | string): void;
  /**
   * Holds `connection`'s writes from now on for this turn's (or the busy) write, for a writer that
   * writes through a library of its own (ws's `send` for graphql-ws's protocol frames): one
   * connection, one scheme of held writes, whoever writes to it.
   */
  hold(connection: Writable): void;
  /** Calls `writes.flush()` at this turn's (or the busy) write, before the held connections leave. */
  gather(writes: GatheredWrites): void;
  /** Whether frames are held for a while now (the process is busy). */
  readonly busy: boolean;
  /** Flushes what is held and stops measuring. Safe to call twice. */
  dispose(): void;
}

/** Writes a writer keeps until the coalescer's write (see {@link WriteCoalescer.gather}). */
export interface GatheredWrites {
  /** Hands what is kept to its connection. */
  flush(): void;
}

/** Options of {@link createWriteCoalescer}. */
export interface WriteCoalescerOptions {
  /** How long frames may wait to leave together when the process is busy (`WS_COALESCE_MS`); 0: never. */
  readonly maxDelayMs: number;
  /** Event loop utilization, 0–1, over which the process counts as busy (default 0.8). */
  readonly busyUtilization?: number;
  /** How often the utilization is measured (default 100 ms). */
  readonly intervalMs?: number;
}

/** Creates a coalescer; see the file header. */
export function createWriteCoalescer(options: WriteCoalescerOptions): WriteCoalescer {
  const corked = new Set<Writable>();
  const gathered: GatheredWrites[] = [];
  let scheduled = false;
  let busy = false;
  let last = performance.eventLoopUtilization();
  const gauge =
    options.maxDelayMs > 0
      ? setInterval(() => {
          const now = performance.eventLoopUtilization();
          busy = performance.eventLoopUtilization(now, last).utilization > (options.busyUtilization ?? 0.8);
          last = now;
        }, options.intervalMs ?? 100)
      : undefined;
  gauge?.unref();

  const flush = () => {
    scheduled = false;
    for (const writes of gathered) writes.flush();
    gathered.length = 0;
    for (const connection of corked) connection.uncork();
    corked.clear();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    if (busy) setTimeout(flush, options.maxDelayMs);
    else setImmediate(flush);
  };

  const hold = (connection: Writable) => {
    if (corked.has(connection)) return;
    connection.cork();
    corked.add(connection);
    schedule();
  };

  return {
    write(connection, data) {
      if (connection.destroyed) return;
      hold(connection);
      connection.write(data);
    },
    hold(connection) {
      if (!connection.destroyed) hold(connection);
    },
    gather(writes) {
      gathered.push(writes);
      schedule();
    },
    get busy() {
      return busy;
    },
    dispose() {
      clearInterval(gauge);
      flush();
    },
  };
}
