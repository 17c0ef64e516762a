/**
 * A cursor store in a page's Web Storage (`localStorage` by default): a reload, or the page opened
 * again later, resumes after the last message the page took. Writes are synchronous, so a cursor is
 * kept the moment its message was taken. Keys are `prefix` + the correlation id.
 *
 * Bounded: it keeps the cursors of the last `maxTests` tests it was given one for (1,000 by
 * default), in the order first seen (`prefix` + `#order` lists them); the oldest go when a new
 * one comes, so a page used for months never fills the origin's quota, which would fail every
 * later write (CURSOR_STORE_FAILED). Only a test's first cursor touches the list.
 */
import type { CursorStore } from './types.js';

/** The part of the Storage interface the store uses. */
export type CursorStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** A cursor store whose reads and writes are done when they return. */
export interface SyncCursorStore extends CursorStore {
  get(correlationId: string): string | undefined;
  set(correlationId: string, cursor: string): void;
}

/** A store over `storage` (default: the page's `localStorage`). */
export function createWebStorageCursorStore(options: { storage?: CursorStorage; prefix?: string; maxTests?: number } = {}): SyncCursorStore {
  const storage = options.storage ?? globalThis.localStorage;
  const prefix = options.prefix ?? 'rcs-cursor:';
  const maxTests = Math.max(1, options.maxTests ?? 1000);
  const orderKey = `${prefix}#order`;
  /** The tests with a cursor, oldest first (what another version or tab left is read leniently). */
  const order = (): string[] => {
    try {
      const listed: unknown = JSON.parse(storage.getItem(orderKey) ?? '[]');
      return Array.isArray(listed) ? listed.filter((id): id is string => typeof id === 'string') : [];
    } catch {
      return [];
    }
  };
  return {
    get: (correlationId) => storage.getItem(prefix + correlationId) ?? undefined,
    set(correlationId, cursor) {
      const key = prefix + correlationId;
      if (storage.getItem(key) === null) {
        const ids = order().filter((id) => id !== correlationId);
        ids.push(correlationId);
        // Room first: the new cursor must fit where the old ones were.
        for (const gone of ids.splice(0, Math.max(0, ids.length - maxTests))) storage.removeItem(prefix + gone);
        storage.setItem(orderKey, JSON.stringify(ids));
      }
      storage.setItem(key, cursor);
    },
  };
}
