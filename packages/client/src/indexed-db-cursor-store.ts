/**
 * A cursor store in the browser's IndexedDB: like the Web Storage one, a reload or the page opened
 * again resumes after the last message the page took, but off the main thread's synchronous storage
 * (and its small quota), and shared by a worker. `follow` waits for each write before it takes the
 * next message, so a cursor is kept before anything after it is handed over. The write ends a
 * moment after the application took the message: a page closed within it takes that message again
 * on its next follow (at least once, never lost).
 *
 * Bounded: the last `maxTests` tests' cursors are kept (1,000 by default); when a new test's first
 * cursor comes, the tests first seen longest ago go, in the same transaction.
 */
import type { CursorStore } from './types.js';

/** Options of {@link createIndexedDbCursorStore}. */
export interface IndexedDbCursorStoreOptions {
  /** The database's name (default `rcs-cursors`). */
  readonly name?: string;
  /** Tests whose cursors are kept (default 1,000). */
  readonly maxTests?: number;
  /** The IndexedDB to use (default: the page's or worker's `indexedDB`). */
  readonly indexedDB?: IDBFactory;
}

interface Kept {
  readonly id: string;
  readonly cursor: string;
  /** When the test's first cursor was kept: the oldest go first. */
  readonly first: number;
}

const STORE = 'cursors';
const BY_FIRST = 'by-first';

/** Settles with a request's result. */
const done = <T>(request: IDBRequest<T>) =>
  new Promise<T>((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('an IndexedDB request failed'));
  });

/** A store in the database `name`, opened on first use. */
export function createIndexedDbCursorStore(options: IndexedDbCursorStoreOptions = {}): CursorStore {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  const maxTests = Math.max(1, options.maxTests ?? 1000);
  let opened: Promise<IDBDatabase> | undefined;
  const database = () => {
    opened ??= new Promise<IDBDatabase>((resolve, reject) => {
      const request = factory.open(options.name ?? 'rcs-cursors', 1);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: 'id' }).createIndex(BY_FIRST, 'first');
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error ?? new Error('IndexedDB could not be opened'));
    }).catch((error: unknown) => {
      opened = undefined; // tried again on the next call
      throw error;
    });
    return opened;
  };
  /** Resolves once `transaction` committed (a write is kept only then). */
  const committed = (transaction: IDBTransaction) =>
    new Promise<void>((resolve, reject) => {
      transaction.oncomplete = () => resolve();
      transaction.onerror = () => reject(transaction.error ?? new Error('an IndexedDB write failed'));
      transaction.onabort = () => reject(transaction.error ?? new Error('an IndexedDB write was aborted'));
    });

  return {
    async get(correlationId) {
      const read = (await database()).transaction(STORE, 'readonly').objectStore(STORE).get(correlationId) as IDBRequest<Kept | undefined>;
      return (await done(read))?.cursor;
    },
    async set(correlationId, cursor) {
      const transaction = (await database()).transaction(STORE, 'readwrite');
      const ending = committed(transaction);
      const store = transaction.objectStore(STORE);
      const known = await done(store.get(correlationId) as IDBRequest<Kept | undefined>);
      store.put({ id: correlationId, cursor, first: known?.first ?? Date.now() } satisfies Kept);
      if (known === undefined) {
        const over = (await done(store.count())) - maxTests;
        if (over > 0) {
          // The oldest first seen, in order; never the one just kept (it is the newest).
          const oldest = await done(store.index(BY_FIRST).getAllKeys(null, over));
          for (const id of oldest) if (id !== correlationId) store.delete(id);
        }
      }
      await ending;
    },
  };
}
