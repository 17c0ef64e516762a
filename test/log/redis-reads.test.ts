/**
 * What the Redis log's reads of a test send to Redis (seen with MONITOR): a summary reads no list,
 * and a page of a test whose list is in read order is a range of the list; with the limit that
 * remains: a test one of whose messages arrived out of sequence is read whole.
 */
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../src/domain/types.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { eventually } from '../support/graphql.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { commandsNaming, openMonitor } from '../support/redis-monitor.js';
import { incoming, uniqueId } from './storage-contract.js';

const { prefix, connect, createLog: createLogWith } = useRedisLogs('rcs-reads');
const createLog = (ttlSeconds = 3600) => createLogWith({ ttlSeconds });
const redis = connect();

/** Appends `sequences` to test `id` in batches of 1,000. */
async function appendAll(log: ResultLog, id: string, sequences: ReadonlyArray<number | null>): Promise<void> {
  const messages: IncomingMessage[] = sequences.map((sequence) => incoming(id, sequence === null ? { payload: 'unsequenced' } : { sequence }));
  for (let from = 0; from < messages.length; from += 1000) await log.append(messages.slice(from, from + 1000));
}
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** The ranges (start, stop) of the LRANGEs among `commands`. */
const lranges = (commands: string[][]) => commands.filter((command) => command[0] === 'lrange').map((command) => command.slice(2, 4));

describe('a page of messages in Redis', () => {
  it('is a range of the list for a test whose messages arrived in order: LRANGE of 10 for ten of 10,000, after a cursor too', async () => {
    const log = createLog();
    const id = uniqueId('in-order');
    await appendAll(log, id, range(1, 10_000));
    const monitor = await openMonitor();
    const commands = commandsNaming(monitor, `{${id}}`);
    const first = await log.messages(id, { first: 10 });
    const later = await log.messages(id, { first: 10, afterKey: 's:5000' });
    await eventually(() => lranges(commands).some(([start]) => start === '5000'), 5000, 'the page after the cursor');
    monitor.disconnect();
    expect(first?.messages.map((m) => m.sequence)).toEqual(range(1, 10));
    expect(first).toMatchObject({ hasNextPage: true, totalCount: 10_000 });
    expect(later?.messages.map((m) => m.sequence)).toEqual(range(5001, 5010));
    // The first page is one LRANGE of its ten; after a cursor, Redis looks for the cursor's message
    // in slices of the list (inside the script), then reads the page's ten.
    expect(lranges(commands)[0]).toEqual(['0', '9']);
    expect(lranges(commands).at(-1)).toEqual(['5000', '5009']);
    expect(lranges(commands)).not.toContainEqual(['0', '-1']);
  });

  it('is read from the whole list, ordered, once a message arrived out of sequence, or for a test written without the order field', async () => {
    const log = createLog();
    const late = uniqueId('late');
    await appendAll(log, late, [...range(2, 50), 1]);
    const unmarked = uniqueId('unmarked');
    await appendAll(log, unmarked, range(1, 50));
    // As an earlier version left it: no `order` field.
    await redis.hdel(`${prefix}:{${unmarked}}:meta`, 'order');
    await appendAll(log, unmarked, [51]);
    const monitor = await openMonitor();
    const commands = commandsNaming(monitor, prefix);
    expect((await log.messages(late, { first: 3 }))?.messages.map((m) => m.sequence)).toEqual([1, 2, 3]);
    expect((await log.messages(unmarked, { first: 3, afterKey: 's:49' }))?.messages.map((m) => m.sequence)).toEqual([50, 51]);
    await eventually(() => lranges(commands).length >= 2, 5000, 'both reads');
    monitor.disconnect();
    expect(lranges(commands)).toEqual([
      ['0', '-1'],
      ['0', '-1'],
    ]);
  });

  it("reads no list for a summary: getMany sends a read of the meta fields and the list's length", async () => {
    const log = createLog();
    const id = uniqueId('summary');
    await appendAll(log, id, range(1, 500));
    const monitor = await openMonitor();
    const commands = commandsNaming(monitor, `{${id}}`);
    const [summary] = await log.getMany([id]);
    await eventually(() => commands.some(([name]) => name === 'llen'), 5000, 'the summary read');
    monitor.disconnect();
    expect(summary).toMatchObject({ correlationId: id, status: 'RUNNING', messageCount: 500 });
    expect(commands.map(([name]) => name).sort()).toEqual(['hmget', 'llen']);
  });
});
