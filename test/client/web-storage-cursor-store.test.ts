/**
 * The Web Storage cursor store's bound: it keeps the cursors of the last `maxTests` tests, the
 * oldest first seen going first, and a test's later cursors neither grow nor reorder its list. The
 * storage is a Map behind the Storage interface (a pure seam); the store in a real page is proven by
 * the dashboard's Chromium tests and the library's reload case (test/client/follow.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { createWebStorageCursorStore } from '@result-collection-service/client';

function mapStorage() {
  const kept = new Map<string, string>();
  const writes: string[] = [];
  return {
    kept,
    writes,
    getItem: (key: string) => kept.get(key) ?? null,
    setItem: (key: string, value: string) => void (writes.push(key), kept.set(key, value)),
    removeItem: (key: string) => void kept.delete(key),
  };
}

describe('createWebStorageCursorStore', () => {
  it('keeps the cursors of the last maxTests tests, forgetting the oldest first seen, and never more keys than that', () => {
    const storage = mapStorage();
    const store = createWebStorageCursorStore({ storage, maxTests: 3 });
    for (const id of ['a', 'b', 'c', 'd', 'e']) store.set(id, `${id}1`);
    expect(['a', 'b', 'c', 'd', 'e'].map((id) => store.get(id))).toEqual([undefined, undefined, 'c1', 'd1', 'e1']);
    // Three cursors and the list of them.
    expect(storage.kept.size).toBe(4);
    expect(JSON.parse(storage.kept.get('rcs-cursor:#order') ?? '')).toEqual(['c', 'd', 'e']);
  });

  it("writes a test's later cursors alone: its list is written on its first cursor only", () => {
    const storage = mapStorage();
    const store = createWebStorageCursorStore({ storage, maxTests: 3 });
    store.set('a', 'a1');
    storage.writes.length = 0;
    for (let i = 2; i <= 100; i++) store.set('a', `a${i}`);
    expect(storage.writes.every((key) => key === 'rcs-cursor:a')).toBe(true);
    expect(store.get('a')).toBe('a100');
  });

  it('reads a list another version left unreadable as empty, and goes on', () => {
    const storage = mapStorage();
    storage.kept.set('rcs-cursor:#order', 'not json');
    const store = createWebStorageCursorStore({ storage, maxTests: 2 });
    store.set('x', 'x1');
    expect(store.get('x')).toBe('x1');
    expect(JSON.parse(storage.kept.get('rcs-cursor:#order') ?? '')).toEqual(['x']);
  });
});
