/**
 * Produces records with kcat (librdkafka, as many producers in the field are), compressed with the
 * codec given, so the tests read batches written by a client other than kafkajs.
 */
import { spawn } from 'node:child_process';

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
  for (const r of options.records) {
    if (r.key.includes('\t') || r.key.includes('\n') || r.value.includes('\n')) throw new Error('kcat records are tab-separated lines: no tab in a key, no newline anywhere');
  }
  const args = [
    '-P', '-b', options.brokers.join(','), '-t', options.topic, '-p', String(options.partition),
    '-z', options.codec, '-K', '\t',
    '-X', 'linger.ms=500', '-X', 'batch.num.messages=100000', '-X', 'request.required.acks=-1',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'ENOENT' ? new Error('kcat is not installed: run scripts/setup.sh (it installs the Debian package kcat)') : error);
    });
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`kcat exited with ${code}: ${stderr.trim()}`));
    });
    child.stdin.end(options.records.map((r) => `${r.key}\t${r.value}\n`).join(''));
  });
}
