/**
 * The memory log's table of tests: each test's entry by correlation id, kept in the order of its
 * last update, with what the tests hold in bytes. It expires a test a TTL after its last update and
 * evicts the least recently updated tests to keep within its bounds (tests and bytes); the log
 * (memory-result-log.ts) is told of every test that leaves, to end its followers.
 */
import { inputBytes, noKeys, TEST_OVERHEAD, type Entry } from './memory-test-entry.js';
import { noRows } from './message-rows.js';
import type { GoneReason } from './test-expired.js';
import type { NewTest } from './result-log.js';

/** Bounds and clock of the table. */
export interface MemoryTestTableOptions {
  readonly now: () => number;
  readonly ttlMs: number;
  readonly maxTests: number;
  /** Bytes the tests may hold (Infinity: unbounded). */
  readonly maxBytes: number;
  /** A test left the table, already removed from it. */
  readonly gone: (correlationId: string, reason: GoneReason) => void;
}

/** The tests of the memory log. */
export interface MemoryTestTable {
  /** Every entry, least recently updated first (live or not yet swept). */
  readonly entries: ReadonlyMap<string, Entry>;
  /** Bytes the tests hold. */
  readonly bytes: number;
  /** The test's entry, unless it is absent or has expired (an expired one is dropped now). */
  live(correlationId: string, at?: number): Entry | undefined;
  /** Adds a test's entry (making room for it) and answers it. */
  insert(correlationId: string, started: NewTest | null, at: number): Entry;
  /** Marks `entry` updated at `at`: it moves to the end of the order. */
  touch(entry: Entry, at: number): void;
  /** `entry` holds `size` more bytes. */
  grow(entry: Entry, size: number): void;
  /**
   * Evicts the least recently updated tests other than `keep` until `more` bytes fit; false when
   * they cannot (`keep` alone holds too much).
   */
  makeRoom(more: number, keep: Entry | undefined): boolean;
  /** Drops a test (its followers are told why, through `gone`); false when it was not there. */
  drop(correlationId: string, reason: GoneReason): boolean;
  /** Drops every test whose TTL has passed. */
  sweep(): void;
  /** Forgets every test, telling no one. */
  clear(): void;
}

/** Creates an empty table. */
export function createMemoryTestTable(options: MemoryTestTableOptions): MemoryTestTable {
  const { now, ttlMs, maxBytes } = options;
  // Map iteration order is insertion order; re-inserting on every write keeps it ordered by
  // `updatedAt`, so eviction and the expiry sweep only ever look at the front.
  const entries = new Map<string, Entry>();
  let bytes = 0;
  const remove = (id: string, entry: Entry, reason: GoneReason) => {
    if (!entries.delete(id)) return;
    bytes -= entry.bytes;
    options.gone(id, reason);
  };
  const makeRoom = (more: number, keep: Entry | undefined): boolean => {
    // The common case (room to spare) without an iterator: this runs for every message stored.
    if (bytes + more <= maxBytes) return true;
    for (const [id, entry] of entries) {
      if (bytes + more <= maxBytes) return true;
      if (entry !== keep) remove(id, entry, 'evicted');
    }
    return bytes + more <= maxBytes;
  };

  return {
    entries,
    get bytes() {
      return bytes;
    },
    live(correlationId, at = now()) {
      const entry = entries.get(correlationId);
      if (entry === undefined) return undefined;
      if (entry.updatedAt <= at - ttlMs) {
        remove(correlationId, entry, 'expired');
        return undefined;
      }
      return entry;
    },
    insert(correlationId, started, at) {
      const entry: Entry = {
        correlationId,
        status: 'PENDING',
        input: started?.input ?? null,
        owner: started?.owner ?? null,
        createdAt: started?.createdAt ?? at,
        updatedAt: at,
        started: started !== null,
        rows: noRows(),
        arrived: 0,
        compact: { correlationId, base: at },
        keys: noKeys(),
        bytes: TEST_OVERHEAD + 2 * correlationId.length + inputBytes(started?.input),
      };
      makeRoom(entry.bytes, undefined);
      entries.set(correlationId, entry);
      bytes += entry.bytes;
      while (entries.size > options.maxTests) {
        const [oldest, evicted] = entries.entries().next().value as [string, Entry];
        remove(oldest, evicted, 'evicted');
      }
      return entry;
    },
    touch(entry, at) {
      // Touched at this same instant already (an earlier message of the batch): it is among the last
      // entries, all of which were updated at `at`, so the order by `updatedAt` holds without moving it.
      if (entry.updatedAt === at) return;
      entry.updatedAt = at;
      entries.delete(entry.correlationId);
      entries.set(entry.correlationId, entry);
    },
    grow(entry, size) {
      entry.bytes += size;
      bytes += size;
    },
    makeRoom,
    drop(correlationId, reason) {
      const entry = entries.get(correlationId);
      if (entry === undefined) return false;
      remove(correlationId, entry, reason);
      return true;
    },
    sweep() {
      const cutoff = now() - ttlMs;
      for (const [id, entry] of entries) {
        if (entry.updatedAt > cutoff) break;
        remove(id, entry, 'expired');
      }
    },
    clear() {
      entries.clear();
      bytes = 0;
    },
  };
}
