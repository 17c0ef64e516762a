/**
 * The ids of the messages taken lately, bounded: a message pushed again (a replay that overlaps what
 * was taken, should a resume ever reach back) is not handed over twice. The service's cursors make a
 * resume exact, so this is a second line, kept small: the last `limit` ids.
 */

/** A bounded set of recently taken message ids. */
export interface SeenIds {
  has(id: string): boolean;
  add(id: string): void;
}

/** A set that forgets its oldest id past `limit`. */
export function createSeenIds(limit: number): SeenIds {
  const ids = new Set<string>();
  return {
    has: (id) => ids.has(id),
    add: (id) => {
      ids.add(id);
      if (ids.size > limit) ids.delete(ids.values().next().value as string);
    },
  };
}
