/**
 * kafkajs (2.2.4, unmaintained) schedules its request queue's check at a negative delay when the
 * broker does not throttle; from Node 24 on every connection then prints a TimeoutNegativeWarning.
 * A client made by the service connects to a real broker (the mock cluster, over TCP) and produces
 * without any such warning, and the queue still delivers what it was given.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkajsQueueTimerPatched } from '../../../src/ingest/kafkajs-queue-timer.js';
import { startMockCluster, type MockCluster } from '../../../tools/mock-cluster/mock-cluster.js';
import { runModuleScript } from '../../support/module-script.js';

const root = join(import.meta.dirname, '..', '..', '..');
let cluster: MockCluster;
beforeAll(async () => {
  cluster = await startMockCluster({ brokers: 1, topics: [{ name: 'timer-test', partitions: 1 }] });
});
afterAll(() => cluster?.stop());

describe("kafkajs's request queue timer", () => {
  it('is replaced on the kafkajs release the workaround was written for', () => {
    expect(kafkajsQueueTimerPatched).toBe(true);
  });

  it('connects and produces to a real broker without a TimeoutNegativeWarning', async () => {
    // In a process of its own, so that the client is the one thing that loads the workaround.
    const script = [
      "import { Partitioners } from 'kafkajs';",
      "import { createKafkaClient } from './src/ingest/kafka-client.ts';",
      "import { createSilentLogger } from './src/base/logger.ts';",
      `const kafka = createKafkaClient({ brokers: ${JSON.stringify(cluster.bootstrapServers)}, clientId: 'timer-test' }, createSilentLogger());`,
      'const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });',
      'await producer.connect();',
      "const [sent] = await producer.send({ topic: 'timer-test', messages: [{ value: '{}' }] });",
      'await new Promise((resolve) => setTimeout(resolve, 50));',
      'await producer.disconnect();',
      'console.log(JSON.stringify({ errorCode: sent.errorCode }));',
    ].join('\n');
    const { stdout, stderr } = await runModuleScript(script);
    expect(JSON.parse(stdout.trim())).toEqual({ errorCode: 0 });
    expect(stderr).not.toContain('TimeoutNegativeWarning');
  });

  it('is applied in every process of the repo that loads kafkajs: the tools, scripts and benchmarks import it, the tests load it first', () => {
    const users = execFileSync('git', ['grep', '-l', "from 'kafkajs'", '--', 'bench', 'scripts', 'tools'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(users.length).toBeGreaterThan(0);
    expect(users.filter((file) => !readFileSync(join(root, file), 'utf8').includes('src/ingest/kafkajs-queue-timer.js'))).toEqual([]);
    expect(readFileSync(join(root, 'vitest.config.ts'), 'utf8')).toContain('test/support/setup-kafkajs.ts');
  });
});
