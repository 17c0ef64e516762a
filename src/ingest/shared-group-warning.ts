/**
 * In the memory mode (`STATE_STORE=memory`) a process holds the tests whose results it reads, and
 * nothing else: a second member of its consumer group (a second replica behind the same load
 * balancer) splits the topic's partitions, so each process answers the tests of the other's
 * partitions as unknown, which breaks the promise that a read finds a test on any replica. kafkajs
 * says nothing of the other members, so once this member has joined, its assignment is held against
 * the topic's partitions (a group's only member is given all of them), and a share is warned of,
 * with what to do instead. The topic's metadata, not a description of the group: every broker
 * answers it, librdkafka's mock cluster too.
 */
import type { Kafka } from 'kafkajs';
import type { Logger } from '../base/logger.js';
import { withAdmin } from './with-admin.js';

/** Options of {@link warnIfGroupShared}. */
export interface SharedGroupOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  readonly topic: string;
  /** This member's partitions of the topic, as of the join. */
  readonly assigned: readonly number[];
  readonly log: Logger;
}

/** Logs a warning when this member was given fewer than all of the topic's partitions. Never rejects. */
export async function warnIfGroupShared(options: SharedGroupOptions): Promise<void> {
  const partitions = await topicPartitions(options.kafka, options.topic);
  // Unknown (the metadata could not be read): the next join asks again.
  if (partitions === undefined || options.assigned.length >= partitions) return;
  options.log.warn(
    { assignment: options.assigned, partitions },
    `STATE_STORE=memory, but consumer group ${options.groupId} has other members: this process reads ${options.assigned.length} ` +
      `of the ${partitions} partitions of ${options.topic}, holds only the tests of those, and answers the others as unknown. ` +
      'Run one replica, or set STATE_STORE=redis (shared state) or replicated (every replica reads everything).',
  );
}

async function topicPartitions(kafka: Kafka, topic: string): Promise<number | undefined> {
  try {
    const { topics } = await withAdmin(kafka, (admin) => admin.fetchTopicMetadata({ topics: [topic] }));
    return topics[0]?.partitions.length;
  } catch {
    return undefined;
  }
}
