/**
 * Produces records compressed with the codec given, written by the clients producers in the field
 * use rather than by kafkajs: kcat (librdkafka) and Kafka's own Java producer.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureKafkaJars } from '../../tools/kafka/kafka-cluster.js';

/** One record: kcat writes the key and value bytes as given. */
export interface KcatRecord {
  readonly key: string;
  readonly value: string;
}

/** Options of {@link produceWithKcat}. */
export interface KcatProduceOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly partition: number;
  /** librdkafka's `compression.codec`. */
  readonly codec: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
  readonly records: readonly KcatRecord[];
}

/**
 * Sends the records in one compressed batch (librdkafka waits up to 500 ms to fill it) and
 * resolves once kcat has flushed them, acknowledged by every in-sync replica.
 */
export function produceWithKcat(options: KcatProduceOptions): Promise<void> {
  const args = [
    '-P',
    '-b',
    options.brokers.join(','),
    '-t',
    options.topic,
    '-p',
    String(options.partition),
    '-z',
    options.codec,
    '-K',
    '\t',
    '-X',
    'linger.ms=500',
    '-X',
    'batch.num.messages=100000',
    '-X',
    'request.required.acks=-1',
  ];
  return run('kcat', args, options.records, 'kcat is not installed: run scripts/setup.sh (it installs the Debian package kcat)');
}

const JAVA_PRODUCER = fileURLToPath(new URL('./java/CompressedProducer.java', import.meta.url));

/** The same with Kafka's Java producer (`compression.type`), from the jars the Kafka helper fetched. */
export async function produceWithJava(options: KcatProduceOptions): Promise<void> {
  const libs = await ensureKafkaJars();
  const args = ['-cp', `${libs}/*`, JAVA_PRODUCER, options.brokers.join(','), options.topic, String(options.partition), options.codec];
  await run('java', args, options.records, 'java is not installed: run scripts/setup.sh');
}

function run(command: string, args: readonly string[], records: readonly KcatRecord[], missing: string): Promise<void> {
  for (const r of records) {
    if (r.key.includes('\t') || r.key.includes('\n') || r.value.includes('\n'))
      throw new Error('records are sent as tab-separated lines: no tab in a key, no newline anywhere');
  }
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'ENOENT' ? new Error(missing) : error);
    });
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} exited with ${code}: ${stderr.trim()}`));
    });
    child.stdin.end(records.map((r) => `${r.key}\t${r.value}\n`).join(''));
  });
}
