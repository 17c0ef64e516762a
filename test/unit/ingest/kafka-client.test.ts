/** kafkajs's log lines reach the service's logger at a level that says whether they are a fault. */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createKafkaClient } from '../../../src/ingest/kafka-client.js';

function capture() {
  const lines: Array<{ level: number; msg: string; error?: string }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

describe('kafkajs log lines', () => {
  it('logs routine group coordination answers at info and real faults at error', async () => {
    const { lines, logger } = capture();
    const kafkaLog = createKafkaClient({ brokers: ['127.0.0.1:9'], clientId: 'log-test' }, logger).logger();
    kafkaLog.error('[Connection] Response Heartbeat(key: 12, version: 3)', { error: 'The group is rebalancing, so a rejoin is needed' });
    kafkaLog.error('[Connection] Response FindCoordinator(key: 10, version: 2)', {
      error: "The coordinator is loading and hence can't process requests for this group",
    });
    kafkaLog.error('[Connection] Response Produce(key: 0, version: 7)', { error: 'There are not enough replicas in sync' });
    kafkaLog.warn('[Connection] Connection timeout', { broker: '127.0.0.1:9' });
    await new Promise((resolve) => setImmediate(resolve));

    const levelOf = (text: string) => lines.find((l) => l.msg.includes(text))?.level;
    expect(levelOf('Response Heartbeat')).toBe(30);
    expect(levelOf('Response FindCoordinator')).toBe(30);
    expect(levelOf('Response Produce')).toBe(50);
    expect(levelOf('Connection timeout')).toBe(40);
  });
});
