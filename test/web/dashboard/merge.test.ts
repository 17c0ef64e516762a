/**
 * How the dashboard merges what it reads with what arrives live (web/dashboard/merge.ts): the
 * list keeps each test once in its newest state whatever order the query answer and the live
 * changes come in, and a replayed message is kept once.
 */
import { describe, expect, it } from 'vitest';
import { addMessage, mergeTests, upsertTest, type TestSummary } from '../../../web/dashboard/merge.js';

const at = (second: number) => new Date(Date.UTC(2026, 10, 23, 9, 0, second)).toISOString();
const test = (correlationId: string, created: number, updated: number, status: string, messageCount: number): TestSummary => ({
  correlationId,
  status,
  messageCount,
  createdAt: at(created),
  updatedAt: at(updated),
});

describe('mergeTests', () => {
  it('keeps each test once, in its newest state, newest test first, whichever source came first', () => {
    const queried = [test('a', 1, 5, 'RUNNING', 2), test('b', 2, 2, 'PENDING', 0)];
    const live = [test('a', 1, 9, 'COMPLETED', 3), test('c', 3, 3, 'PENDING', 0)];
    const expected = [test('c', 3, 3, 'PENDING', 0), test('b', 2, 2, 'PENDING', 0), test('a', 1, 9, 'COMPLETED', 3)];
    expect(mergeTests(queried, live)).toEqual(expected);
    // A query answer read before the change arrived (older) never undoes it.
    expect(mergeTests(live, queried)).toEqual(expected);
  });

  it('breaks a tie in time by the message count', () => {
    expect(mergeTests([test('a', 1, 5, 'RUNNING', 3)], [test('a', 1, 5, 'RUNNING', 2)])).toEqual([test('a', 1, 5, 'RUNNING', 3)]);
  });
});

describe('upsertTest', () => {
  it('adds a new test, replaces an older state, and ignores an older one', () => {
    const one = upsertTest([], test('a', 1, 1, 'PENDING', 0));
    expect(one).toEqual([test('a', 1, 1, 'PENDING', 0)]);
    const newer = upsertTest(one, test('a', 1, 4, 'RUNNING', 1));
    expect(newer).toEqual([test('a', 1, 4, 'RUNNING', 1)]);
    expect(upsertTest(newer, test('a', 1, 2, 'PENDING', 0))).toBe(newer);
  });
});

describe('addMessage', () => {
  it('appends messages without a sequence in delivery order', () => {
    const listed = [{ id: 't:1' }, { id: 't:2' }, { id: 't:3' }].reduce<readonly { id: string }[]>(addMessage, []);
    expect(listed.map((m) => m.id)).toEqual(['t:1', 't:2', 't:3']);
  });

  it('lists messages in the test’s order (by sequence), whatever order they arrive in', () => {
    type Message = { readonly id: string; readonly sequence: number | null };
    const arrivals: Message[] = [
      { id: 'a', sequence: 1 },
      { id: 'b', sequence: 2 },
      { id: 'c', sequence: 3 },
      { id: 'e', sequence: 5 },
      { id: 'd', sequence: 4 },
      { id: 'x', sequence: null },
      { id: 'late', sequence: 0 },
    ];
    // As `messages` orders them: a sequenced one never goes before one without a sequence.
    const listed = arrivals.reduce<readonly Message[]>((messages, message) => addMessage(messages, message), []);
    expect(listed.map((m) => m.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'x', 'late']);
  });
});
