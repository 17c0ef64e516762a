/**
 * The peer's ingest, as kafkajs's documentation shows it: `consumer.run({ eachMessage })`, each
 * record parsed, written to the store (which drops a sequence it has seen) and, when stored,
 * published to the subscriptions. Offsets are committed by kafkajs's auto-commit, after the
 * handler has returned for the records of a batch.
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../../../src/ingest/kafkajs-queue-timer.js';
import '../../../src/ingest/kafkajs-stopped-fetch.js';
import type { Consumer, Kafka } from 'kafkajs';
import type { PubSubEngine } from 'graphql-subscriptions';
import { RESULT_STORED } from './schema.js';
import type { PeerMessage, PeerStore } from './store.js';

/** How the consumer is started. */
export interface PeerConsumerOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  readonly topic: string;
  readonly store: PeerStore;
  readonly pubsub: PubSubEngine;
  /** The trigger stored messages are published on (default {@link RESULT_STORED}). */
  readonly trigger?: string;
  readonly fromBeginning?: boolean;
  readonly fetchMaxWaitMs?: number;
  readonly sessionTimeoutMs?: number;
  /** Called after each record was handled (stored or found a duplicate); the benchmarks count with it. */
  readonly onRecord?: (stored: boolean) => void;
  /** Called when the consumer has joined its group (a readiness check). */
  readonly onGroupJoin?: () => void;
}

interface ResultRecord {
  readonly correlationId?: unknown;
  readonly sequence?: unknown;
  readonly status?: unknown;
  readonly final?: unknown;
  readonly payload?: unknown;
}

const STATUSES = new Set(['PENDING', 'RUNNING', 'COMPLETED', 'FAILED']);

/** The message a record stands for, or undefined when it is not a result record. */
export function toPeerMessage(value: Buffer | null, receivedAt = Date.now()): PeerMessage | undefined {
  let record: ResultRecord;
  try {
    record = JSON.parse(String(value)) as ResultRecord;
  } catch {
    return undefined;
  }
  if (typeof record.correlationId !== 'string') return undefined;
  const sequence = typeof record.sequence === 'number' ? record.sequence : null;
  const status = typeof record.status === 'string' && STATUSES.has(record.status.toUpperCase()) ? record.status.toUpperCase() : null;
  return {
    id: `${record.correlationId}:${sequence ?? receivedAt}`,
    correlationId: record.correlationId,
    sequence,
    status,
    final: record.final === true,
    payload: record.payload ?? null,
    receivedAt,
  };
}

/** Connects, subscribes and runs the consumer; resolves once it runs (the group join follows). */
export async function startPeerConsumer(options: PeerConsumerOptions): Promise<Consumer> {
  const { store, pubsub } = options;
  const consumer = options.kafka.consumer({
    groupId: options.groupId,
    ...(options.fetchMaxWaitMs === undefined ? {} : { maxWaitTimeInMs: options.fetchMaxWaitMs }),
    ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeout: options.sessionTimeoutMs }),
  });
  // Before run(): kafkajs may have joined by the time run() resolves, and the event is not repeated.
  if (options.onGroupJoin) consumer.on(consumer.events.GROUP_JOIN, options.onGroupJoin);
  await consumer.connect();
  await consumer.subscribe({ topics: [options.topic], fromBeginning: options.fromBeginning ?? false });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const result = toPeerMessage(message.value);
      // A record that is not a result is skipped: retrying it would only fail again.
      if (result === undefined) return;
      const stored = await store.addMessage(result);
      if (stored) await pubsub.publish(options.trigger ?? RESULT_STORED, { testMessages: result });
      options.onRecord?.(stored);
    },
  });
  return consumer;
}
