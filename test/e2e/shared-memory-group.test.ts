/**
 * The memory mode keeps a process's tests in that process: two replicas in one consumer group split
 * the results topic's partitions, and each answers the other's tests as unknown. Nothing stops an
 * operator from starting a second one, so each process holds its assignment against the topic's
 * partitions when it joins and warns when it was given fewer than all, on a real broker (librdkafka's mock cluster) with real consumer groups.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { eventually } from '../support/graphql.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';

const topics = uniqueTopics('shared-memory');
let cluster: MockCluster;
const running: TestService[] = [];

/** A process of the group in the given mode, with the warnings it logs. */
async function replica(stateStore: 'memory' | 'redis', group = topics.group) {
  const warnings: Array<{ msg: string; partitions?: number; assignment?: number[] }> = [];
  const svc = await startTestService({
    brokers: cluster.bootstrapServers,
    // A short session: the mock broker's rebalance after a member leaves waits about that long.
    env: {
      STATE_STORE: stateStore,
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      KAFKA_RESULTS_TOPIC: topics.results,
      KAFKA_REQUESTS_TOPIC: topics.requests,
      KAFKA_GROUP_ID: group,
    },
    logger: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as (typeof warnings)[number]) }),
  });
  running.push(svc);
  const shared = () => warnings.filter((w) => w.msg.includes('has other members'));
  return { svc, shared };
}

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 2 },
      { name: topics.requests, partitions: 1 },
    ],
  });
});

afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
  await cluster?.stop();
});

describe('memory mode in a shared consumer group', () => {
  it('warns on each process once a second one joins its group, and not while it is alone', { timeout: 90_000 }, async () => {
    const a = await replica('memory');
    await a.svc.ready();
    // Alone: its join was described (the warning would be logged by now had it been shared).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(a.shared()).toEqual([]);

    const b = await replica('memory');
    await b.svc.ready();
    for (const process of [a, b]) await eventually(() => process.shared().length > 0, 30_000, 'the shared group warned of');
    for (const process of [a, b]) {
      const [warning] = process.shared();
      expect(warning?.partitions).toBe(2);
      expect(warning?.assignment).toHaveLength(1);
      expect(warning?.msg).toContain(`consumer group ${topics.group} has other members: this process reads 1 of the 2 partitions`);
      expect(warning?.msg).toContain('STATE_STORE=redis');
    }
  });

  it('says nothing in a mode whose state is shared (Redis), where a group of several is the design', { timeout: 90_000 }, async () => {
    const group = `${topics.group}-redis`;
    const [c, d] = [await replica('redis', group), await replica('redis', group)];
    await Promise.all([c.svc.ready(), d.svc.ready()]);
    await eventually(async () => (await c.svc.service.broker.consumer.state()).state === 'joined', 30_000, 'c joined');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect([...c.shared(), ...d.shared()]).toEqual([]);
  });
});
