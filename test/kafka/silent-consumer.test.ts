/**
 * A consumer whose Kafka client goes silent is replaced, on a real Kafka node. kafkajs can stop
 * without a word (no fetch, no heartbeat, no crash: the chaos runs met one in the external
 * system's consumer), and nothing else would ever start it again. The silence here is a node
 * frozen (SIGSTOP) for longer than a short limit: every request of the client waits on it, so
 * kafkajs reports nothing. Each consumer of the service, the results one and the replicated
 * mode's requests one, must count the silence as a stall, replace its client, and once the node
 * thaws read on from where it was, every record handed over once; the replaced client, which
 * leaves its group only then, must not make the new one's state `stopped`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../src/base/logger.js';
import type { AppendResult, IncomingMessage } from '../../src/domain/types.js';
import { createKafkaRequestConsumer } from '../../src/ingest/kafka-request-consumer.js';
import { createKafkaRequestPublisher } from '../../src/ingest/kafka-request-publisher.js';
import { createKafkaResultConsumer } from '../../src/ingest/kafka-result-consumer.js';
import type { TestRequest } from '../../src/ingest/request-publisher.js';
import { startKafka, type KafkaCluster } from '../../tools/kafka/kafka-cluster.js';
import { eventually } from '../support/graphql.js';
import { createTestProducer, result, storeOnce, type TestProducer } from '../support/kafka.js';
import { uniqueTopics } from '../support/service.js';

const topics = uniqueTopics('silent');
/** Far below the default (120 s), so that a freeze of a few seconds outlasts it. */
const STALL_LIMIT_MS = 4000;
/** Longer than the limit, shorter than kafkajs's request timeout (30 s): kafkajs says nothing meanwhile. */
const FREEZE_MS = 15_000;
let cluster: KafkaCluster;
let producer: TestProducer;

beforeAll(async () => {
  cluster = await startKafka({
    nodes: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  producer = await createTestProducer(cluster.bootstrapServers);
}, 120_000);

afterAll(async () => {
  cluster?.resumeNode(1);
  await producer?.disconnect();
  await cluster?.stop();
});

const kafka = (clientId: string) => new Kafka({ clientId, brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });

/** Freezes the node until the consumer counted a stall (or the freeze is over), then thaws it. */
async function freezeUntilStalled(stalls: () => number): Promise<number> {
  cluster.pauseNode(1);
  try {
    const frozenAt = Date.now();
    while (stalls() === 0 && Date.now() - frozenAt < FREEZE_MS) await sleep(250);
    return stalls();
  } finally {
    cluster.resumeNode(1);
  }
}

/**
 * Waits until the group has one member (the replaced client has left, which it does once the node
 * answers again, and says so as it stops), then a moment for that last word to arrive.
 */
async function replacedClientGone(groupId: string): Promise<void> {
  const admin = await cluster.admin();
  await eventually(async () => (await admin.describeGroups([groupId])).groups[0]?.members.length === 1, 60_000, 'one member in the group');
  await sleep(1000);
}

describe('a consumer whose Kafka client goes silent', () => {
  it('results: replaced once silent past its limit, then reads on, every record stored once', { timeout: 150_000 }, async () => {
    const stored = new Map<string, number[]>();
    const delivered: IncomingMessage[] = [];
    const onEvents = async (messages: readonly IncomingMessage[]): Promise<ReadonlyArray<AppendResult['outcome']>> => {
      delivered.push(...messages);
      return storeOnce(stored, messages);
    };
    const consumer = createKafkaResultConsumer({
      kafka: kafka('silent-results'),
      groupId: topics.group,
      topic: topics.results,
      fromBeginning: true,
      fetchMaxWaitMs: 100,
      sessionTimeoutMs: 10_000,
      stallLimitMs: STALL_LIMIT_MS,
      // Committed at once, so that where it was is on the broker before the node freezes.
      commitIntervalMs: 0,
      onEvents,
      logger: createSilentLogger(),
    });
    consumer.start();
    try {
      await producer.send(topics.results, [result('silent-1', { sequence: 1 })]);
      await eventually(() => stored.get('silent-1')?.length === 1, 60_000, 'the first record stored');
      const admin = await cluster.admin();
      await eventually(
        async () => (await admin.fetchOffsets({ groupId: topics.group, topics: [topics.results] }))[0]?.partitions[0]?.offset === '1',
        30_000,
        'the first record committed',
      );
      expect(consumer.activity().entered.stalled).toBe(0);

      expect(await freezeUntilStalled(() => consumer.activity().entered.stalled)).toBeGreaterThan(0);

      await producer.send(topics.results, [result('silent-1', { sequence: 2 }), result('silent-2', { sequence: 1 })]);
      await eventually(() => stored.get('silent-1')?.length === 2 && stored.get('silent-2')?.length === 1, 90_000, 'the records after the thaw stored');
      await eventually(() => consumer.state().state === 'joined', 30_000, 'the consumer in its group again');
      // The replaced client's stop, as it leaves, is not the new one's.
      await replacedClientGone(topics.group);
      expect(consumer.state().state).toBe('joined');
    } finally {
      await consumer.dispose();
    }
    // Read on from where it was: nothing handed over twice, even the record stored before the stall.
    expect(delivered.map((m) => `${m.correlationId}#${m.sequence}`).sort()).toEqual(['silent-1#1', 'silent-1#2', 'silent-2#1']);
  });

  it('requests (replicated mode): replaced once silent past its limit, then reads on', { timeout: 150_000 }, async () => {
    const seen: TestRequest[] = [];
    const publisher = createKafkaRequestPublisher({
      kafka: kafka('silent-publisher'),
      topic: topics.requests,
      timeoutMs: 30_000,
      logger: createSilentLogger(),
    });
    const consumer = createKafkaRequestConsumer({
      kafka: kafka('silent-requests'),
      groupId: `${topics.group}-requests`,
      topic: topics.requests,
      fetchMaxWaitMs: 100,
      sessionTimeoutMs: 10_000,
      stallLimitMs: STALL_LIMIT_MS,
      onRequests: async (requests) => {
        seen.push(...requests);
      },
      logger: createSilentLogger(),
    });
    consumer.start();
    const request = (correlationId: string): TestRequest => ({ correlationId, input: { n: 1 }, owner: 'silent-user', requestedAt: Date.now() });
    try {
      await publisher.publish(request('silent-request-1'));
      await eventually(() => seen.some((r) => r.correlationId === 'silent-request-1'), 60_000, 'the first request read');
      expect(consumer.activity().entered.stalled).toBe(0);

      expect(await freezeUntilStalled(() => consumer.activity().entered.stalled)).toBeGreaterThan(0);

      await publisher.publish(request('silent-request-2'));
      await eventually(() => seen.some((r) => r.correlationId === 'silent-request-2'), 90_000, 'the request after the thaw read');
      await eventually(() => consumer.state().state === 'joined', 30_000, 'the consumer in its group again');
      await replacedClientGone(`${topics.group}-requests`);
      expect(consumer.state().state).toBe('joined');
    } finally {
      await consumer.dispose();
      await publisher.dispose();
    }
    // This group never commits: a replaced client reads the topic from its start again, as at a restart.
    expect(new Set(seen.map((r) => r.correlationId))).toEqual(new Set(['silent-request-1', 'silent-request-2']));
  });
});
