/**
 * The contract every result-log implementation passes: storage (storage-contract.ts, batches in
 * storage-batch-contract.ts), reads of summaries and pages (read-contract.ts), following (follow-contract.ts), and listing with the change feed
 * (list-contract.ts). Each implementation's test file calls `describeResultLogContract` once.
 */
import { afterEach, describe } from 'vitest';
import type { ResultLog } from '../../src/log/result-log.js';
import { describeFollowContract, type Expiring } from './follow-contract.js';
import { describeListContract } from './list-contract.js';
import { describeReadContract } from './read-contract.js';
import { describeBatchStorageContract } from './storage-batch-contract.js';
import { describeStorageContract } from './storage-contract.js';

/** How an implementation's logs are made for the contract. */
export interface ResultLogFactory {
  /** A fresh log (it may share its data with other logs of the factory, e.g. one Redis). */
  create(bounds: { readonly ttlSeconds: number; readonly maxMessagesPerTest: number }): ResultLog | Promise<ResultLog>;
  /** A second handle on the data of `log` (made with `bounds`): another replica, or `log` itself for a log held in one process. */
  peer(log: ResultLog, bounds: { readonly ttlSeconds: number; readonly maxMessagesPerTest: number }): ResultLog | Promise<ResultLog>;
  /** Drops the connection of `log` that carries live updates, and resolves once it is back. */
  dropLiveConnection?(log: ResultLog): Promise<void>;
  /**
   * Two handles on one log whose tests the test makes expire when it says (`expire`: as the TTL
   * would, found within about 200 ms): not on a timer a loaded machine could beat.
   */
  expiring(): Promise<Expiring>;
  /** The factory's `maxMessagesPerTest` for the storage tests; 10,000 unless told. */
  readonly maxMessagesPerTest?: number;
}

/** Registers the contract for one implementation. */
export function describeResultLogContract(name: string, factory: ResultLogFactory): void {
  const maxMessagesPerTest = factory.maxMessagesPerTest ?? 10_000;
  describe(`Result log contract: ${name}`, () => {
    const opened: ResultLog[] = [];
    // A log on a Redis Cluster is ready once its connections are (the factory may wait for them).
    const open = async (made: ResultLog | Promise<ResultLog>) => {
      const log = await made;
      opened.push(log);
      return log;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((log) => log.dispose()));
    });
    const fresh = () => open(factory.create({ ttlSeconds: 3600, maxMessagesPerTest }));
    const storage = { log: fresh, maxMessagesPerTest, ttl: (ttlSeconds: number) => open(factory.create({ ttlSeconds, maxMessagesPerTest })) };
    describeStorageContract(storage);
    describeBatchStorageContract(storage);
    describeReadContract(storage);
    const pair = async () => {
      const log = await fresh();
      const peer = await factory.peer(log, { ttlSeconds: 3600, maxMessagesPerTest });
      return { log, peer: peer === log ? log : await open(peer) };
    };
    describeListContract({ pair, ttl: storage.ttl });
    const expiring = async () => {
      const made = await factory.expiring();
      opened.push(made.log);
      if (made.peer !== made.log) opened.push(made.peer);
      return made;
    };
    describeFollowContract({
      pair,
      expiring,
      ...(factory.dropLiveConnection ? { dropLiveConnection: (log: ResultLog) => (factory.dropLiveConnection as (l: ResultLog) => Promise<void>)(log) } : {}),
    });
  });
}
