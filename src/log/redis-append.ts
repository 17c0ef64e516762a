/**
 * The Redis log's append: a batch's messages grouped by test, one script call for all of them on a
 * single primary (one per test on Redis Cluster, whose keys of a test share a slot), the tests
 * listed before it (and, when the log waits for replicas, held by one before it counts as stored), and the script's reply read back into one result per message
 * (redis-append-script.ts has the script and its arguments).
 */
import { finishingStatus, nextStatus, statusOf } from '../domain/status.js';
import type { AppendResult, IncomingMessage, TestMessage, TestStatus } from '../domain/types.js';
import type { Logger } from '../base/logger.js';
import { keyKind } from './compact-message.js';
import { encodeMessage } from './message-format.js';
import type { RedisChannels } from './redis-channels.js';
import { dedupeField, storedMessage } from './redis-record.js';
import { listRefresher, type RedisTestIndex } from './redis-test-index.js';
import { listedThen } from './redis-guards.js';
import type { RedisTestKeys } from './redis-test-keys.js';
import type { StoreFormat } from './store-format.js';

/** Options of {@link createRedisAppend}: the parts of the Redis log an append uses. */
export interface RedisAppendOptions {
  /** A test's keys (redis-result-log.ts has the layout). */
  readonly keysOf: (id: string) => RedisTestKeys;
  readonly channels: Pick<RedisChannels, 'changeChannelOf'>;
  /** `PUBLISH`, or `SPUBLISH` on Redis Cluster. */
  readonly publishCommand: string;
  /** Runs the append script, for the whole call (`rcsAppend`) or one test (`rcsAppendOne`). */
  readonly run: (name: 'rcsAppend' | 'rcsAppendOne', args: Array<string | number>) => Promise<Array<string | number>>;
  readonly index: Pick<RedisTestIndex, 'stage' | 'refresh'>;
  readonly ttlSeconds: number;
  readonly maxMessagesPerTest: number;
  /** One script call per test (Redis Cluster), rather than one for the batch. */
  readonly callPerTest: boolean;
  /** The store's format as this replica writes it (store-format.ts): from 2 on, runs of sequences are kept. */
  readonly format: Pick<StoreFormat, 'writes'>;
  readonly logger: Logger;
}

/**
 * One message's result, its stored message made only when read: the consumer reads the outcome
 * alone, and a message object per record was a few per cent of the ingest's busy time (bench/README.md,
 * "The append script's deduplication keys"). A class, as compact-message.ts's: a getter on a shared
 * prototype, one small object per result.
 */
class StoredResult implements AppendResult {
  constructor(
    readonly outcome: AppendResult['outcome'],
    readonly status: TestStatus,
    private readonly incoming: IncomingMessage,
    private readonly receivedAt: number,
    private readonly arrival: number,
  ) {}
  get message(): TestMessage {
    return storedMessage(this.incoming, this.receivedAt, this.arrival);
  }
}

/** What an append wrote to, for the lists of tests: the owners of the tests it stored messages for. */
interface Written {
  readonly owners: Set<string>;
  /** Whether the append stored any message. */
  stored: boolean;
}

/** Creates the append of the Redis log: the results of `batch`, one per message, in order. */
export function createRedisAppend(options: RedisAppendOptions): (batch: readonly IncomingMessage[]) => Promise<AppendResult[]> {
  const { keysOf, channels, index, ttlSeconds, maxMessagesPerTest, callPerTest } = options;
  const refreshLists = listRefresher(index, options.logger);

  /** Appends the messages of the given tests in one script call; answers per test, in order. */
  const appendCall = async (tests: ReadonlyArray<readonly [string, readonly IncomingMessage[]]>, now: number, written: Written): Promise<AppendResult[][]> => {
    const keys: string[] = [];
    const runs = options.format.writes() >= 2;
    const args: Array<string | number> = [now, ttlSeconds, maxMessagesPerTest, options.publishCommand, runs ? 1 : 0];
    for (const [id, messages] of tests) {
      const k = keysOf(id);
      keys.push(k.meta, k.msgs);
      args.push(id, k.channel, channels.changeChannelOf(k.meta), messages.length);
      // The few messages that finish the test, by position; most messages finish nothing.
      const finishing: Array<string | number> = [];
      messages.forEach((message, i) => {
        const status = finishingStatus(message);
        if (status !== null) finishing.push(i + 1, status);
      });
      args.push(finishing.length / 2, ...finishing);
      // On a store that keeps runs of sequences, messages keyed by consecutive sequences go as a run
      // (its first sequence, then their texts alone), which the script pushes as a whole when it
      // continues the test's run; else a message keyed by its sequence passes '' for its field,
      // which the script builds only when the test's run does not hold it (redis-sequence-run.ts).
      const from = runs ? runOf(messages) : null;
      args.push(from ?? '');
      if (from !== null) for (const message of messages) args.push(encodeMessage(message, now));
      else
        for (const message of messages)
          args.push(runs && keyKind(message) === 'sequence' ? '' : dedupeField(message.key), message.sequence ?? '', encodeMessage(message, now));
    }
    const reply = await (tests.length === 1 ? options.run('rcsAppendOne', [...keys, ...args]) : options.run('rcsAppend', [keys.length, ...keys, ...args]));
    let at = 0;
    return tests.map(([, messages]) => {
      // The status moves message by message, by the domain's rule, from where the test stood.
      let status = statusOf(reply[at] === '' ? null : (reply[at] as TestStatus), Number(reply[at + 1]));
      // What the call stores goes to the end of the list, in order: the n-th one inserted is the test's (count + n)-th.
      let arrival = Number(reply[at + 1]);
      if (reply[at + 2] !== '') written.owners.add(String(reply[at + 2]));
      const letters = String(reply[at + 3]);
      if (letters.includes('i')) written.stored = true;
      at += 4;
      return messages.map((incoming, i) => {
        const letter = letters[i];
        if (letter === 'i') status = nextStatus(status, incoming);
        const outcome = letter === 'i' ? 'inserted' : letter === 'o' ? 'over-limit' : 'duplicate';
        // A duplicate's place is its stored copy's, which the reply does not say; 0 stands for it (nobody reads it).
        const place = letter === 'i' ? ++arrival : 0;
        return new StoredResult(outcome, status, incoming, outcome === 'duplicate' ? Number(reply[at++]) : now, place);
      });
    });
  };

  const append = async (batch: readonly IncomingMessage[]): Promise<AppendResult[]> => {
    if (batch.length === 0) return [];
    const now = Date.now();
    const byTest = new Map<string, number[]>();
    batch.forEach((message, i) => {
      const positions = byTest.get(message.correlationId);
      if (positions === undefined) byTest.set(message.correlationId, [i]);
      else positions.push(i);
    });
    const tests = [...byTest].map(([id, positions]) => [id, positions.map((i) => batch[i] as IncomingMessage)] as const);
    // One call for the whole batch on a single primary; on Redis Cluster one call per test (its
    // keys share a slot), all sent at once.
    const written: Written = { owners: new Set(), stored: false };
    // Every test listed (if new) in one command, sent first: before the script calls on one node,
    // each awaited with the script (redis-guards.ts `listedThen`).
    const listed = index.stage(
      tests.map(([id]) => ({ correlationId: id, owner: null })),
      now,
    );
    const answers = await listedThen(
      listed,
      callPerTest ? Promise.all(tests.map((test) => appendCall([test], now, written))).then((all) => all.flat()) : appendCall(tests, now, written),
    );
    // The lists live as long as their tests.
    if (written.stored) await refreshLists(written.owners);
    const results = new Array<AppendResult>(batch.length);
    [...byTest.values()].forEach((positions, t) => positions.forEach((position, i) => (results[position] = answers[t]?.[i] as AppendResult)));
    return results;
  };

  return append;
}

/** The first sequence of `messages` when they are keyed by consecutive sequences (`s:7`, `s:8`, …), else null. */
function runOf(messages: readonly IncomingMessage[]): number | null {
  const from = messages[0]?.sequence;
  if (from === undefined || from === null) return null;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as IncomingMessage;
    if (message.sequence !== from + i || keyKind(message) !== 'sequence') return null;
  }
  return from;
}
