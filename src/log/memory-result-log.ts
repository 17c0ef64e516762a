/**
 * In-memory result log: one process's state (and each replica's own in the replicated mode).
 * Bounded by a time to live (refreshed on every write), a maximum number of tests and a maximum of
 * bytes held (least recently updated evicted first for both), plus a cap of messages per test. A
 * test's messages are held as columns (message-rows.ts) and read as compact views
 * (compact-message.ts), and deduplication keys add no string for the common key kinds. An append
 * delivers what it stored to this process's followers synchronously, once the whole batch is
 * stored: nothing can come between storing and announcing.
 */
import { nextStatus } from '../domain/status.js';
import type { AppendResult, IncomingMessage } from '../domain/types.js';
import { disposeOnce } from '../process/disposable.js';
import { createChangeFeed, type ChangeFeed } from './change-feed.js';
import { compactMessage, keyKind } from './compact-message.js';
import { addKey, findStored, hasKey, inputBytes, messageBytes, snapshot, summaryOf, type Entry } from './memory-test-entry.js';
import { createMemoryTestTable, type MemoryTestTable } from './memory-test-table.js';
import { openFollower } from './follower.js';
import { createFollowedTests } from './followed-tests.js';
import type { FollowSource } from './follower-types.js';
import { testExpired } from './test-expired.js';
import { createTestListeners, type TestListeners } from './test-listeners.js';
import { insertRow, rowsAfter, sliceRows } from './message-rows.js';
import { expiryCheckInterval, type NewTest, type ResultLog } from './result-log.js';
import { selectPage, toListPage } from './test-page.js';

/** Bounds and clock of the memory log. */
export interface MemoryResultLogOptions {
  readonly ttlSeconds: number;
  readonly maxTests: number;
  readonly maxMessagesPerTest: number;
  /**
   * Bytes the tests may hold, as {@link messageBytes} and {@link inputBytes} count them (payloads,
   * keys, inputs): past it the least recently updated tests are evicted, and a message that does
   * not fit even then (its own test alone is too large) is refused as over the limit. Unbounded
   * when absent.
   */
  readonly maxBytes?: number;
  /** Injected for tests; defaults to `Date.now`. */
  readonly now?: () => number;
  /** How often expired tests are swept (default: a tenth of the TTL, between 1 s and 60 s). */
  readonly sweepIntervalMs?: number;
}

/** Creates an in-memory {@link ResultLog}; `size` is the number of tests held, for metrics. */
export function createMemoryResultLog(options: MemoryResultLogOptions): ResultLog & { readonly size: number; readonly bytes: number } {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlSeconds * 1000;
  const table = createMemoryTestTable({
    now,
    ttlMs,
    maxTests: options.maxTests,
    maxBytes: options.maxBytes ?? Infinity,
    gone: (id, reason) => {
      // No change announces a test that leaves (its subscribers are ended instead), but the response
      // cache must not answer it from before: an evicted or removed test reads as unknown. Watchers
      // first, as a change tells them first.
      changes.touched(id);
      listeners.gone(id, testExpired(id, reason));
    },
  });
  const { entries, live } = table;
  const sweeper = setInterval(table.sweep, options.sweepIntervalMs ?? expiryCheckInterval(options.ttlSeconds));
  sweeper.unref();
  // Followers in this process; an append hands them what it stored, synchronously.
  const listeners = createTestListeners();
  // Subscribers to the change feed in this process; an append or a create emits to them synchronously.
  const changes = createChangeFeed();
  const source: FollowSource = {
    read: async (correlationId) => {
      const entry = live(correlationId);
      return entry === undefined ? null : snapshot(entry);
    },
    listen: async (correlationId, listener, listenOptions) => listeners.add(correlationId, listener, listenOptions).remove,
    readFrom: async (correlationId, passed) => {
      const entry = live(correlationId);
      if (entry === undefined) return null;
      // Rare (a subscriber catching up): the later arrivals, sorted back into the order they came in.
      return rowsAfter(entry.rows, entry.compact, passed).map((message) => ({ message, arrival: message.arrival }));
    },
  };

  // Its one listener per followed test, and the groups its live pushed followers share (followed-tests.ts).
  const followed = createFollowedTests(source);

  return {
    get size() {
      return entries.size;
    },
    get bytes() {
      return table.bytes;
    },

    async create(test: NewTest) {
      const at = now();
      const existing = live(test.correlationId, at);
      if (existing === undefined) {
        const entry = table.insert(test.correlationId, test, at);
        if (changes.count() > 0) changes.emit({ kind: 'CREATED', test: summaryOf(entry) });
        return snapshot(entry);
      }
      if (existing.started) return snapshot(existing);
      // Seen through its results first (the replicated mode reads a test's start request and its
      // results from two topics, in no set order): the start says what they could not.
      const before = summaryOf(existing);
      existing.started = true;
      const added = inputBytes(test.input);
      table.makeRoom(added, existing);
      table.grow(existing, added);
      existing.input = test.input;
      existing.owner = test.owner;
      if (test.createdAt !== undefined) existing.createdAt = test.createdAt;
      table.touch(existing, at);
      if (changes.count() > 0) changes.emit({ kind: 'CREATED', test: summaryOf(existing) }, before);
      return snapshot(existing);
    },

    get: source.read,

    async getMany(correlationIds) {
      return correlationIds.map((id) => {
        const entry = live(id);
        return entry === undefined ? null : summaryOf(entry);
      });
    },

    // The page's own messages, made from their rows; nothing of the rest.
    async messages(correlationId, range) {
      const entry = live(correlationId);
      return entry === undefined ? null : sliceRows(entry.rows, entry.compact, range);
    },

    async append(batch) {
      const at = now();
      const results = new Array<AppendResult>(batch.length);
      const created = new Set<string>();
      for (let i = 0; i < batch.length; i++) results[i] = appendOne(table, options.maxMessagesPerTest, batch[i] as IncomingMessage, at, created);
      // Delivered in the order stored, only what is new; a test nobody follows costs one lookup, and
      // a process nobody follows in (ingest at full speed) none: no listener, no one to add one meanwhile.
      if (listeners.size > 0) deliver(listeners, results);
      if (changes.count() > 0) emitChanges(changes, entries, results, created);
      return results;
    },

    async list(listOptions) {
      const cutoff = now() - ttlMs;
      const candidates: Entry[] = [];
      for (const entry of entries.values()) {
        if (entry.updatedAt > cutoff && (listOptions.owner === undefined || entry.owner === listOptions.owner)) candidates.push(entry);
      }
      const { page, hasNextPage, totalCount } = selectPage(candidates, listOptions);
      return toListPage(page.map(summaryOf), hasNextPage, totalCount);
    },

    changes: async (changeOptions) => changes.open(changeOptions),

    watchChanges: async (listener) => changes.watch(listener),

    follow: (correlationId, followOptions) => openFollower(source, correlationId, followOptions, followed),

    followers: (correlationId) => followed.count(correlationId),

    changeSubscribers: () => changes.clients(),

    remove: async (correlationId) => table.drop(correlationId, 'removed'),

    async check() {
      // Process memory is always reachable; nothing to probe.
    },

    dispose: disposeOnce(async () => {
      clearInterval(sweeper);
      table.clear();
      listeners.clear();
      changes.clear();
    }),
  };
}

/** Hands each new message of `results` to its test's listeners, in the order stored. */
function deliver(listeners: TestListeners, results: readonly AppendResult[]): void {
  for (let i = 0; i < results.length; i++) {
    const result = results[i] as AppendResult;
    if (result.outcome === 'inserted' && listeners.has(result.message.correlationId))
      listeners.emit(result.message.correlationId, { message: result.message, status: result.status, arrival: result.message.arrival });
  }
}

/** One change per test the batch stored something for, after the whole batch is stored. */
function emitChanges(changes: ChangeFeed, entries: ReadonlyMap<string, Entry>, results: readonly AppendResult[], created: ReadonlySet<string>): void {
  const changed = new Set<string>();
  for (const result of results) if (result.outcome === 'inserted') changed.add(result.message.correlationId);
  // With only watchers (the response cache), the id alone: no summary built for nobody.
  const clients = changes.clients() > 0;
  for (const id of changed) {
    const entry = entries.get(id);
    if (entry === undefined) continue;
    if (clients) changes.emit({ kind: created.has(id) ? 'CREATED' : 'UPDATED', test: summaryOf(entry) });
    else changes.touched(id);
  }
}

// Synchronous: a batch is stored in one go, without a promise per message, at one instant.
// Tests the batch creates are added to `created`.
function appendOne(table: MemoryTestTable, maxMessages: number, incoming: IncomingMessage, at: number, created: Set<string>): AppendResult {
  let entry = table.live(incoming.correlationId, at);
  if (entry === undefined) {
    entry = table.insert(incoming.correlationId, null, at);
    created.add(entry.correlationId);
  }
  const kind = keyKind(incoming);
  if (hasKey(entry.keys, incoming, kind)) {
    const earlier = findStored(entry, incoming);
    return { outcome: 'duplicate', status: entry.status, message: earlier };
  }
  const message = compactMessage(incoming, at, entry.compact, entry.arrived + 1, kind);
  const size = messageBytes(message, incoming);
  if (entry.rows.length >= maxMessages || !table.makeRoom(size, entry)) {
    return { outcome: 'over-limit', status: entry.status, message };
  }
  table.grow(entry, size);
  insertRow(entry.rows, message);
  entry.arrived += 1;
  addKey(entry.keys, incoming, kind);
  entry.status = nextStatus(entry.status, message);
  table.touch(entry, at);
  return { outcome: 'inserted', status: entry.status, message };
}
