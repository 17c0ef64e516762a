/**
 * kafkajs 2.2.4 (unmaintained) retries a commit under whatever generation its consumer holds at
 * each retry, so a commit asked for before a rejoin could be sent under the new one, for partitions
 * that moved to another member. This drives kafkajs's own runner with its consumer group as a
 * stub: a commit refused once is retried as before, and one whose group was joined again in the
 * meantime ends, failed, instead of being sent again.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { kafkajsCommitAcrossRejoinPatched } from '../../../src/ingest/kafkajs-commit-across-rejoin.js';
import { kafkajsRunner } from '../../support/kafkajs-runner.js';

const require = createRequire(import.meta.url);

/** A running runner of kafkajs's whose group refuses the first commit as a moved coordinator does, joining again meanwhile when `rejoins`. */
function runnerRefusingOnce(rejoins: boolean) {
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
  const sent: string[] = [];
  const consumerGroup = {
    groupId: 'commit-across-rejoin',
    memberId: 'member',
    offsetManager: { generation: 1 },
    async commitOffsets() {
      sent.push(`generation ${this.offsetManager.generation}`);
      if (sent.length > 1) return;
      if (rejoins) this.offsetManager = { generation: 2 };
      // 16: NOT_COORDINATOR_FOR_GROUP, retriable.
      throw createErrorFromCode(16);
    },
  };
  const runner = kafkajsRunner(consumerGroup, { retries: 3, initialRetryTime: 1, maxRetryTime: 5 });
  runner.running = true;
  return { runner, sent };
}

const offsets = { topics: [{ topic: 'results', partitions: [{ partition: 0, offset: '42' }] }] };

describe("kafkajs's commit retried across a rejoin", () => {
  it('is patched on the kafkajs release the workaround was written for', () => {
    expect(kafkajsCommitAcrossRejoinPatched).toBe(true);
  });

  it('retries a refused commit while the group holds the generation it was asked for', async () => {
    const { runner, sent } = runnerRefusingOnce(false);
    await runner.commitOffsets(offsets);
    expect(sent).toEqual(['generation 1', 'generation 1']);
  });

  it('ends a commit whose group was joined again, failed, rather than sending it under the new generation', async () => {
    const { runner, sent } = runnerRefusingOnce(true);
    await expect(runner.commitOffsets(offsets)).rejects.toMatchObject({ name: 'KafkaJSNonRetriableError' });
    expect(sent).toEqual(['generation 1']);
  });
});
