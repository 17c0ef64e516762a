/**
 * Produces records at a fixed rate, round-robin over the given tests, each carrying `sentAt` (the
 * time it was handed to the producer) for the subscribers to measure against.
 * Usage: produce.ts <brokers> <topic> <rate> <seconds> <id>...
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../../src/ingest/kafkajs-queue-timer.js';
import '../../src/ingest/kafkajs-stopped-fetch.js';
import { Kafka, Partitioners, logLevel } from 'kafkajs';

const [brokers = '', topic = '', rateArg = '100', secondsArg = '5', ...ids] = process.argv.slice(2);
const rate = Number(rateArg);
const total = Math.round(rate * Number(secondsArg));
const kafka = new Kafka({ clientId: 'bench-produce', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
await producer.connect();

const tickMs = 10;
const perTick = rate * (tickMs / 1000);
const start = Date.now();
let sent = 0;
const sequences = new Map<string, number>();
while (sent < total) {
  const due = Math.min(total, Math.floor(((Date.now() - start) / tickMs + 1) * perTick));
  const messages = [];
  for (; sent < due; sent++) {
    const id = ids[sent % ids.length] as string;
    const sequence = (sequences.get(id) ?? 0) + 1;
    sequences.set(id, sequence);
    messages.push({
      key: id,
      value: JSON.stringify({ correlationId: id, sequence, status: 'running', payload: { sentAt: Date.now(), note: 'x'.repeat(60) } }),
    });
  }
  if (messages.length > 0) void producer.send({ topic, messages });
  await new Promise((resolve) => setTimeout(resolve, tickMs));
}
await producer.disconnect();
console.log(JSON.stringify({ sent, seconds: (Date.now() - start) / 1000 }));
