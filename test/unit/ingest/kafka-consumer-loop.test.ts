/**
 * The consumer loop's give-up path, over kafkajs's own client and no broker: when not even a
 * kafkajs consumer can be made (kafkajs refuses its settings), there is nothing to replace and no
 * event will come to retry, so the loop says so (liveness reports `gave up`) instead of spinning.
 * Its replacement of a dead or silent consumer is proven on a real broker (test/kafka).
 */
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/base/logger.js';
import { createKafkaRequestConsumer } from '../../../src/ingest/kafka-request-consumer.js';
import { createKafkaResultConsumer } from '../../../src/ingest/kafka-result-consumer.js';

// Never dialled: kafkajs makes a consumer without connecting.
const kafka = new Kafka({ clientId: 'loop-test', brokers: ['127.0.0.1:9'], logLevel: logLevel.NOTHING });
const logger = createSilentLogger();

describe('a consumer that cannot be made', () => {
  it('gives the results consumer up, crashed with the reason, and stops cleanly', async () => {
    const consumer = createKafkaResultConsumer({ kafka, groupId: '', topic: 'results', fromBeginning: true, onEvents: async () => [], logger });
    consumer.start();
    expect(consumer.activity().gaveUp).toMatch(/groupId must be a non-empty string/);
    expect(consumer.state()).toMatchObject({ state: 'crashed', reason: expect.stringMatching(/groupId/) });
    await consumer.dispose();
    await consumer.dispose();
    expect(consumer.state().state).toBe('stopped');
  });

  it('gives the requests consumer up the same way, instead of throwing out of start()', async () => {
    const consumer = createKafkaRequestConsumer({ kafka, groupId: '', topic: 'requests', onRequests: async () => undefined, logger });
    expect(() => consumer.start()).not.toThrow();
    expect(consumer.activity().gaveUp).toMatch(/groupId must be a non-empty string/);
    expect(consumer.state()).toMatchObject({ state: 'crashed', reason: expect.stringMatching(/groupId/) });
    await consumer.dispose();
    expect(consumer.state().state).toBe('stopped');
  });
});
