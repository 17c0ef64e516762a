/**
 * A cursor store in a page's Web Storage (`localStorage` by default): a reload, or the page opened
 * again later, resumes after the last message the page took. Writes are synchronous, so a cursor is
 * kept the moment its message was taken. Keys are `prefix` + the correlation id.
 */
import type { CursorStore } from './types.js';

/** The part of the Storage interface the store uses. */
export type CursorStorage = Pick<Storage, 'getItem' | 'setItem'>;

/** A store over `storage` (default: the page's `localStorage`). */
export function createWebStorageCursorStore(options: { storage?: CursorStorage; prefix?: string } = {}): CursorStore {
  const storage = options.storage ?? globalThis.localStorage;
  const prefix = options.prefix ?? 'rcs-cursor:';
  return {
    get: (correlationId) => storage.getItem(prefix + correlationId) ?? undefined,
    set: (correlationId, cursor) => storage.setItem(prefix + correlationId, cursor),
  };
}
