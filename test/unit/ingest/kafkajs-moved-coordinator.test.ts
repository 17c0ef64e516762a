/**
 * kafkajs 2.2.4 (unmaintained) keeps sending a consumer's offset commits to the broker that was the
 * group's coordinator when it joined, after that broker answered that it no longer is. This drives
 * kafkajs's own offset manager with the brokers as stubs: the first coordinator refuses with
 * `NOT_COORDINATOR`, the cluster names another, and the retry must reach that one.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { kafkajsMovedCoordinatorPatched } from '../../../src/ingest/kafkajs-moved-coordinator.js';

const require = createRequire(import.meta.url);

interface KafkaOffsetManager {
  commitOffsets(offsets: { topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }> }): Promise<void>;
}
type OffsetManagerClass = new (options: Record<string, unknown>) => KafkaOffsetManager;

/** A broker stub that records the commits it is sent, and refuses them as a former coordinator when `moved`. */
function broker(name: string, moved: boolean, sent: string[]) {
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
  return {
    isConnected: () => true,
    offsetCommit: async () => {
      sent.push(name);
      // 16: NOT_COORDINATOR_FOR_GROUP, as a broker that no longer coordinates the group answers.
      if (moved) throw createErrorFromCode(16);
    },
  };
}

describe("kafkajs's offset commits after the group's coordinator moved", () => {
  it('is patched on the kafkajs release the workaround was written for', () => {
    expect(kafkajsMovedCoordinatorPatched).toBe(true);
  });

  it('goes to the new coordinator once the old one refused a commit', async () => {
    const OffsetManager = require('kafkajs/src/consumer/offsetManager/index.js') as OffsetManagerClass;
    const InstrumentationEmitter = require('kafkajs/src/instrumentation/emitter.js') as new () => unknown;
    const sent: string[] = [];
    const lookups: string[] = [];
    const cluster = {
      refreshMetadata: async () => undefined,
      committedOffsets: () => ({}),
      findGroupCoordinator: async ({ groupId }: { groupId: string }) => (lookups.push(groupId), broker('new', false, sent)),
    };
    const manager = new OffsetManager({
      cluster,
      coordinator: broker('old', true, sent),
      memberAssignment: { results: [0] },
      autoCommit: false,
      topicConfigurations: {},
      instrumentationEmitter: new InstrumentationEmitter(),
      groupId: 'moved-coordinator',
      generationId: 3,
      memberId: 'member',
    });
    const offsets = { topics: [{ topic: 'results', partitions: [{ partition: 0, offset: '42' }] }] };
    await expect(manager.commitOffsets(offsets)).rejects.toMatchObject({ type: 'NOT_COORDINATOR_FOR_GROUP' });
    await manager.commitOffsets(offsets);
    expect(sent).toEqual(['old', 'new']);
    expect(lookups).toEqual(['moved-coordinator']);
  });
});
