/**
 * The response cache of `/graphql` over HTTP: the serialized answers of queries that only read
 * tests (`test`, `tests`), served again without running Apollo Server while nothing they read has
 * changed. The lifecycle runs it as a plugin (`plugins/response-caching.ts`): at its `arrive` step
 * it answers a request it kept, and after the execute step of one it may keep (`onResult`: the
 * result as sent, after any plugin that replaces it) it keeps the result, with the tests its
 * context's loaders read. An entry is keyed by the request as sent (document or its id, operation name,
 * variables, extensions), the `Accept` header (it chooses the content type) and what the caller may
 * see (its read scope, and every test or only its own); it lists the tests it read, those answered
 * null included, since they may appear.
 *
 * Entries are dropped by the log's own change feed, in this process for the memory log and from
 * every replica for Redis: the cache watches it (`watchChanges`: told each changed test's id as
 * the change is emitted, before any subscriber), so an entry is gone before a change is delivered
 * to anyone else, and before the write that made it is acknowledged in this process. A response
 * computed while one of its tests changed is not kept (each test's last change is stamped on a
 * clock). While notices may be missed (Redis reconnecting) nothing is served or
 * kept, and everything is forgotten once they arrive again. No entry outlives the expiry of a
 * test it read (the log's TTL after the test's last change), which no change announces; a test that
 * leaves the store otherwise (evicted past the memory store's bounds, removed) is told to the
 * watchers of its process as a change of it: on Redis a removal (a start whose request could not
 * be sent, moments after its create) reaches no other replica's cache, which may answer the test
 * from before until a later start of it changes it, or until its TTL.
 *
 * Only answers that Apollo Server would send the same to another caller of the same visibility are
 * kept: a POST with a JSON body (so CSRF prevention passed), a query, a result with data and no
 * errors or extensions (which Apollo sends with status 200 and no headers of its own). The body
 * kept is the one sent: Apollo Server serializes every result with the same function
 * (`../http/result-body.ts`), in the content type the request's `Accept` chose
 * (`ArrivingOperation.contentType`). A hit is sent as Apollo's integration sends (the endpoint's
 * `send`), so its bytes and headers are the same, with a `Cache-Status` header added.
 */
import { Kind, type ExecutionResult, type OperationDefinitionNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import { createHash } from 'node:crypto';
import type { AccessPolicy } from '../../auth/access.js';
import { SCOPES, hasScope, type Principal } from '../../auth/principal.js';
import type { Logger } from '../../base/logger.js';
import type { ChangeDelivery, LiveResults } from '../../log/result-log.js';
import type { TestSummary } from '../../domain/types.js';
import { dataBody } from '../http/result-body.js';
import { createChangeClock } from './change-clock.js';
import type { Arrival, ArrivingOperation, ExecutionHooks, OperationToExecute } from './operation-plugin.js';

/** Options of {@link createResponseCache}. */
export interface ResponseCacheOptions {
  readonly log: LiveResults;
  readonly access: AccessPolicy;
  /** Most responses kept; 0 turns the cache off. */
  readonly maxEntries: number;
  /** Most bytes kept, as held in memory (bodies, the ids each read, the index); 0 turns the cache off. */
  readonly maxBytes: number;
  /** How long the log keeps a test after its last change: no entry outlives a test it read. */
  readonly ttlSeconds: number;
  readonly logger: Logger;
}

/** What the cache counted. */
export interface ResponseCacheStats {
  readonly hits: number;
  readonly stored: number;
  readonly entries: number;
  readonly bytes: number;
}

/** The cache of one process. */
export interface ResponseCache {
  /** The answer kept for a request, if any. */
  arrive(operation: ArrivingOperation): Arrival;
  /** A query about to run for a request `arrive` found no answer for: what keeps its result, when it may be kept. */
  onExecute(operation: OperationToExecute): ExecutionHooks | undefined;
  stats(): ResponseCacheStats;
  /** Subscribes to the change feed; until it resolves, nothing is served or kept. */
  start(): Promise<void>;
  dispose(): void;
}

interface Entry {
  readonly body: string;
  readonly contentType: string;
  readonly reads: readonly string[];
}

/** A request `arrive` found no answer for: its key, and the clock and epoch it arrived at. */
interface Pending {
  readonly key: string;
  readonly started: number;
  readonly epoch: number;
}

/** The header a hit carries (RFC 9211). */
export const CACHE_STATUS_HEADER = 'Cache-Status';
const HIT_HEADERS: Readonly<Record<string, string>> = Object.freeze({ [CACHE_STATUS_HEADER]: 'result-collection-service; hit' });
/** Root fields whose answers only depend on the tests they read and the caller's visibility. */
const CACHEABLE_FIELDS: ReadonlySet<string> = new Set(['test', 'tests', '__typename']);
/** Bytes an entry costs beyond its body and ids: the entry, its LRU node, its key. */
const ENTRY_BYTES = 400;
/** Bytes each test id an entry read costs in the index (`byTest`'s Map entry and Set member). */
const INDEX_BYTES_PER_READ = 160;

/**
 * What an entry holds in memory, about: its body (UTF-16), and for each test it read the id (in
 * the entry and in the index) and the index's own structures. An entry that read a hundred unknown
 * ids holds far more than its small body.
 */
function entryBytes(entry: Entry): number {
  let bytes = ENTRY_BYTES + 2 * entry.body.length;
  for (const id of entry.reads) bytes += 4 * id.length + INDEX_BYTES_PER_READ;
  return bytes;
}
const ALWAYS: ChangeDelivery = { live: true, epoch: 0 };

/** The key of a request's answer: what it asks and what its caller may see, digested (undefined: a request without a body is not cached). */
function requestKey(access: AccessPolicy, principal: Principal, body: ArrivingOperation['json'], accept: string | undefined): string | undefined {
  if (body === undefined) return undefined;
  const visibility = `${hasScope(principal, SCOPES.read) ? 'r' : '-'}${access.seesAll(principal) ? '*' : `:${principal.subject}`}`;
  // A digest: the request can be a megabyte, the key stays 44 characters (in the cache and in the index).
  const request = JSON.stringify([
    visibility,
    accept ?? null,
    body.query ?? null,
    body.documentId ?? null,
    body.operationName ?? null,
    body.variables ?? null,
    body.extensions ?? null,
  ]);
  return createHash('sha256').update(request).digest('base64');
}

/** Creates the cache; call `start` before serving. */
export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const { log, access } = options;
  const enabled = options.maxEntries > 0 && options.maxBytes > 0;
  const entries = new LRUCache<string, Entry>({
    max: Math.max(1, options.maxEntries),
    maxSize: Math.max(1, options.maxBytes),
    sizeCalculation: (entry) => entryBytes(entry),
    dispose: (entry, key) => unindex(entry, key),
  });
  // Entries by the tests they read, to drop them when one changes.
  const byTest = new Map<string, Set<string>>();
  // Each test's last change (bounded in bytes too: a test id is up to 256 characters).
  const clock = createChangeClock({ maxIds: 100_000, maxBytes: 16 * 1024 * 1024 });
  let epoch = -1;
  /** Stops watching the change feed; set while the cache watches it. */
  let unwatch: (() => void) | undefined;
  let stopped = false;
  let opened: (() => void) | undefined;
  let hits = 0;
  let stored = 0;
  const logger = options.logger.child({ component: 'response-cache' });

  function unindex(entry: Entry, key: string): void {
    for (const id of entry.reads) {
      const keys = byTest.get(id);
      keys?.delete(key);
      if (keys?.size === 0) byTest.delete(id);
    }
  }
  function changed(correlationId: string): void {
    clock.stamp(correlationId);
    const keys = byTest.get(correlationId);
    if (keys === undefined) return;
    for (const key of [...keys]) entries.delete(key);
  }
  /** Whether notices arrive now; a new epoch forgets everything kept before it. */
  function usable(): boolean {
    if (unwatch === undefined) return false;
    const delivery = log.changeDelivery?.() ?? ALWAYS;
    if (delivery.epoch !== epoch) {
      entries.clear();
      epoch = delivery.epoch;
      clock.forget();
    }
    return delivery.live;
  }
  // Requests that may be kept, until their operation runs: by the arrival the lifecycle hands on.
  const pending = new WeakMap<ArrivingOperation, Pending>();
  function arrive(arrival: ArrivingOperation): Arrival {
    if (!enabled || !usable()) return undefined;
    const key = requestKey(access, arrival.principal, arrival.json, arrival.accept);
    if (key === undefined) return undefined;
    const entry = entries.get(key);
    if (entry !== undefined) {
      hits++;
      return { body: entry.body, contentType: entry.contentType, headers: HIT_HEADERS };
    }
    pending.set(arrival, { key, started: clock.now, epoch });
    return undefined;
  }

  function onExecute({ prepared, operation, context }: OperationToExecute): ExecutionHooks | undefined {
    const arrival = prepared.received.arrival;
    const waiting = arrival === undefined ? undefined : pending.get(arrival);
    const contentType = arrival?.contentType;
    if (waiting === undefined || contentType === undefined || !onlyReadsTests(operation)) return undefined;
    // The result as sent, after every plugin that may replace it.
    return { onResult: (result) => keep(waiting, contentType, result, context.loaders.reads) };
  }

  /** Keeps a result with data alone, unless a test it read changed since its request arrived. */
  function keep(
    { key, started, epoch: startedEpoch }: Pending,
    contentType: string,
    result: ExecutionResult,
    reads: ReadonlyMap<string, TestSummary | null>,
  ): void {
    const { data, errors, extensions } = result;
    if (data == null || errors !== undefined || extensions !== undefined) return;
    const ttl = entryTtl(reads, options.ttlSeconds * 1000);
    if (ttl <= 0 || !usable() || epoch !== startedEpoch || clock.changedSince(reads.keys(), started)) return;
    // The body Apollo Server sends for it, serialized once for both (`stringifyResult`).
    const entry: Entry = { body: dataBody(data), contentType, reads: [...reads.keys()] };
    entries.set(key, entry, { ttl });
    if (!entries.has(key)) return;
    for (const id of entry.reads) {
      let keys = byTest.get(id);
      if (keys === undefined) byTest.set(id, (keys = new Set()));
      keys.add(key);
    }
    stored++;
  }

  /** Watches the change feed, trying again every second while it cannot (the log's stop ends the watch). */
  async function follow(): Promise<void> {
    while (!stopped) {
      try {
        const stop = await log.watchChanges(changed);
        if (stopped) return stop();
        unwatch = stop;
        opened?.();
        return;
      } catch (error) {
        if (stopped) return;
        logger.warn({ err: error }, 'change feed unavailable; responses are not cached until it is back');
        // The service starts without it: requests run uncached meanwhile.
        opened?.();
      }
      await new Promise((resolve) => setTimeout(resolve, 1000).unref());
    }
  }

  return {
    arrive,
    onExecute,
    stats: () => ({ hits, stored, entries: entries.size, bytes: entries.calculatedSize }),
    async start() {
      if (!enabled) return;
      // Resolves once the subscription holds, or its first attempt failed (the cache keeps trying).
      await new Promise<void>((resolve) => {
        opened = resolve;
        void follow().finally(resolve);
      });
    },
    dispose() {
      stopped = true;
      unwatch?.();
      unwatch = undefined;
      entries.clear();
    },
  };
}

/**
 * How long an entry that read `reads` may live: until the log forgets the test it read that changed
 * longest ago (the entry would outlive it), and at most the log's TTL, even for an entry that read
 * no test (unknown ids): its creation would drop the entry (a change), but nothing else would.
 */
function entryTtl(reads: ReadonlyMap<string, TestSummary | null>, ttlMs: number): number {
  let oldest = Infinity;
  for (const test of reads.values()) if (test !== null) oldest = Math.min(oldest, test.updatedAt);
  return Math.min(ttlMs, oldest === Infinity ? Infinity : oldest + ttlMs - Date.now());
}

/** Whether an operation is a query of test reads only (plain root fields, no directives). */
function onlyReadsTests(operation: OperationDefinitionNode): boolean {
  if (operation.operation !== 'query' || (operation.directives?.length ?? 0) > 0) return false;
  return operation.selectionSet.selections.every(
    (selection) => selection.kind === Kind.FIELD && CACHEABLE_FIELDS.has(selection.name.value) && (selection.directives?.length ?? 0) === 0,
  );
}
