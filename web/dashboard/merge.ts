/**
 * How the dashboard puts together what arrives from different places, with no gap and no
 * duplicate: the list from a query plus live changes, and a test's messages in the test's order.
 * Pure functions, tested on their own.
 */

/** What the list needs of a test. */
export interface TestSummary {
  readonly correlationId: string;
  readonly status: string;
  readonly messageCount: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What the detail needs of a message. */
export interface MessageSummary {
  readonly id: string;
  readonly sequence?: number | null;
}

/** True when `a` is a later state of the same test than `b`: newer, or as new with more messages. */
function isNewer(a: TestSummary, b: TestSummary): boolean {
  const byTime = Date.parse(a.updatedAt) - Date.parse(b.updatedAt);
  return byTime > 0 || (byTime === 0 && a.messageCount > b.messageCount);
}

/**
 * One entry per test, each in its latest state, newest first. A query answer read before a live
 * change never undoes it, and a change that arrived before the answer is not lost: whichever is
 * newer wins, whatever the order they came in.
 */
export function mergeTests<T extends TestSummary>(...sources: ReadonlyArray<readonly T[]>): T[] {
  const byId = new Map<string, T>();
  for (const source of sources) {
    for (const test of source) {
      const known = byId.get(test.correlationId);
      if (known === undefined || isNewer(test, known)) byId.set(test.correlationId, test);
    }
  }
  return [...byId.values()].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || a.correlationId.localeCompare(b.correlationId));
}

/** `tests` with `test` put in (or replacing an older state of it); the same array when nothing changed. */
export function upsertTest<T extends TestSummary>(tests: readonly T[], test: T): readonly T[] {
  const index = tests.findIndex((t) => t.correlationId === test.correlationId);
  if (index === -1) return [...tests, test];
  if (!isNewer(test, tests[index] as T)) return tests;
  return tests.map((t, i) => (i === index ? test : t));
}

/**
 * `messages` with `message` put in its place in the test's order, as `messages` lists a test: by
 * `sequence` where given (after the last message whose sequence is not greater, never before one
 * without), else at the end. The service pushes messages in the order they arrived, which may not
 * be that order. (Each message comes once: the client library resumes after the last one taken.)
 */
export function addMessage<M extends MessageSummary>(messages: readonly M[], message: M): readonly M[] {
  const sequence = message.sequence ?? null;
  let index = messages.length;
  if (sequence !== null) {
    while (index > 0) {
      const before = messages[index - 1]?.sequence ?? null;
      if (before === null || before <= sequence) break;
      index -= 1;
    }
  }
  return [...messages.slice(0, index), message, ...messages.slice(index)];
}
