/** tools/kafka/cli.ts: a real Kafka node by hand, driven over stdin, stopped by a signal. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';

const root = fileURLToPath(new URL('../../', import.meta.url));
let cli: ChildProcessWithoutNullStreams | undefined;

afterAll(async () => {
  if (cli !== undefined && cli.exitCode === null && cli.signalCode === null) {
    cli.kill('SIGTERM');
    await once(cli, 'exit');
  }
});

/** Whether a TCP port accepts connections. */
function listening(address: string): Promise<boolean> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const socket = connect(Number(port), host as string);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('kafka cli', () => {
  it('prints the bootstrap list, runs commands from stdin, and stops the node on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'tools/kafka/cli.ts', '--nodes', '1', '--topic', 'cli-topic:2'], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cli = child;
    const replies = createInterface({ input: child.stderr })[Symbol.asyncIterator]();
    /** Sends a command and returns its OK/ERR line (the other stderr lines are information). */
    const command = async (line: string): Promise<string> => {
      child.stdin.write(`${line}\n`);
      for (;;) {
        const { value, done } = await replies.next();
        if (done) throw new Error(`cli ended before answering ${line}`);
        if (/^(OK|ERR)\b/.test(value as string)) return value as string;
      }
    };
    const [bootstrap] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    expect(bootstrap).toMatch(/^127\.0\.0\.1:\d+$/);

    const kafka = new Kafka({ clientId: 'cli-test', brokers: [bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    const { topics } = await admin.fetchTopicMetadata({ topics: ['cli-topic'] });
    expect(topics[0]?.partitions).toHaveLength(2);
    await admin.disconnect();

    expect(await command('leader cli-topic 1')).toBe('OK 1');
    expect(await command('topic second 3')).toBe('OK');
    expect(await command('jump 1')).toMatch(/^ERR unknown command "jump"/);
    expect(await command('kill 2')).toMatch(/^ERR kill wants a node id \(1\)/);
    expect(await command('kill 1')).toBe('OK');
    expect(await listening(bootstrap)).toBe(false);
    expect(await command('start 1')).toBe('OK');
    expect(await listening(bootstrap)).toBe(true);

    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(await listening(bootstrap)).toBe(false);
  }, 180_000);

  it('refuses a node count it cannot run', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'tools/kafka/cli.ts', '--nodes', '2'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(2);
    expect(stderr).toContain('--nodes wants 1 or 3, got "2"');
  }, 60_000);
});
