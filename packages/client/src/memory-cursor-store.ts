/** A cursor store in memory: resumes within the life of the page or process that holds it. */
import type { CursorStore } from './types.js';

/** A new, empty store. */
export function createMemoryCursorStore(): CursorStore {
  const cursors = new Map<string, string>();
  return {
    get: (correlationId) => cursors.get(correlationId),
    set: (correlationId, cursor) => void cursors.set(correlationId, cursor),
  };
}
