/**
 * kafkajs 2.2.4 (unmaintained) wedges a consumer stopped while its fetchers are being rebuilt (the
 * brokers it fetches from changed at that moment): the new fetchers loop on the stopped runner's
 * empty answer in the microtask queue, and no timer fires again. This drives kafkajs's own runner
 * and fetch manager through that moment, with its consumer group (the broker side) as a stub: the
 * stop arrives as the node list changes. With the workaround the stop completes and the fetchers
 * asked for no more than a few node lists; without it they spin (here, until the stub gives up
 * after 10,000 lists so that the test ends).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kafkajsStoppedFetchPatched } from '../../../src/ingest/kafkajs-stopped-fetch.js';
import { kafkajsRunner } from '../../support/kafkajs-runner.js';

const root = join(import.meta.dirname, '..', '..', '..');

/** A runner of kafkajs's over a consumer group that answers at once, whose node list changes as `stop` is called. */
function runnerStoppedAsNodesChange() {
  let nodeIds = [1];
  let lists = 0;
  let stopped: Promise<void> | undefined;
  const consumerGroup = {
    groupId: 'stopped-fetch',
    memberId: 'member',
    connect: async () => undefined,
    joinAndSync: async () => undefined,
    leave: async () => undefined,
    heartbeat: async () => undefined,
    commitOffsetsIfNecessary: async () => undefined,
    fetch: async () => [],
    getNodeIds: () => {
      lists += 1;
      if (lists > 10_000) throw new Error('still fetching after 10,000 node lists');
      // The fetcher's second look at the brokers before a fetch (the first is its creation's): a
      // broker has joined, and the consumer is told to stop, at the same moment.
      if (lists === 3) {
        nodeIds = [1, 2];
        stopped = runner.stop();
      }
      return nodeIds;
    },
  };
  const runner = kafkajsRunner(consumerGroup, { retries: 0 });
  return { runner, lists: () => lists, stopped: () => stopped };
}

describe("kafkajs's consumer stopped while its fetchers are rebuilt", () => {
  it('is patched on the kafkajs release the workaround was written for', () => {
    expect(kafkajsStoppedFetchPatched).toBe(true);
  });

  it('stops: the rebuilt fetchers end instead of spinning on the stopped runner', async () => {
    const { runner, lists, stopped } = runnerStoppedAsNodesChange();
    await runner.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stopped()).toBeDefined();
    await stopped();
    expect(lists()).toBeLessThan(20);
  });

  it('is applied wherever the other kafkajs workaround is: the service, the tests, the tools, the chaos run and the benchmarks', () => {
    const files = execFileSync('git', ['grep', '-l', 'kafkajs-queue-timer.js', '--', 'src', 'test/support', 'tools', 'chaos', 'bench', 'scripts'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      // The workarounds themselves aside (the idle queue wraps the timer's method, so it loads it first).
      .filter((file) => file !== '' && !file.endsWith('kafkajs-queue-timer.ts') && !file.endsWith('kafkajs-idle-queue.ts'));
    expect(files).toContain('src/ingest/kafka-client.ts');
    expect(files.filter((file) => !readFileSync(join(root, file), 'utf8').includes('kafkajs-stopped-fetch.js'))).toEqual([]);
  });
});
