/**
 * Starts librdkafka's mock cluster (a real Kafka-protocol broker on 127.0.0.1) as a child process
 * and drives its fault injection. Used by the tests, the local stack and the benchmarks.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const here = fileURLToPath(new URL('.', import.meta.url));
const BINARY = fileURLToPath(new URL('../../.cache/bin/mock-cluster', import.meta.url));
const SOURCE = `${here}mock-cluster.c`;

/** What to start. */
export interface MockClusterOptions {
  /** Number of brokers (ids 1..N). Default 1. */
  readonly brokers?: number;
  /** Topics to create before the bootstrap list is printed. */
  readonly topics?: ReadonlyArray<{ readonly name: string; readonly partitions: number }>;
}

/** A running mock cluster. */
export interface MockCluster {
  /** e.g. `['127.0.0.1:39123', …]`. */
  readonly bootstrapServers: string[];
  /** Sends one command line (see mock-cluster.c); resolves on OK, rejects with the ERR text. */
  command(line: string): Promise<void>;
  createTopic(name: string, partitions: number): Promise<void>;
  /** Ends the process; safe to call twice. */
  stop(): Promise<void>;
}

/** Builds the binary when needed (see build.sh). */
export async function ensureMockClusterBinary(): Promise<string> {
  if (existsSync(BINARY) && statSync(BINARY).mtimeMs >= statSync(SOURCE).mtimeMs) return BINARY;
  await promisify(execFile)('bash', [`${here}build.sh`]);
  return BINARY;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts a mock cluster and waits for its bootstrap list. */
export async function startMockCluster(options: MockClusterOptions = {}): Promise<MockCluster> {
  const binary = await ensureMockClusterBinary();
  const args = ['--brokers', String(options.brokers ?? 1)];
  for (const topic of options.topics ?? []) args.push('--topic', `${topic.name}:${topic.partitions}`);
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });

  const lines = createInterface({ input: child.stdout });
  const replies: Array<(line: string) => void> = [];
  let bootstrap: ((servers: string[]) => void) | undefined;
  lines.on('line', (line) => {
    if (line.startsWith('BOOTSTRAP ')) bootstrap?.(line.slice('BOOTSTRAP '.length).trim().split(','));
    else replies.shift()?.(line);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    running.delete(child);
    for (const reply of replies.splice(0)) reply('ERR mock cluster exited');
    resolve();
  }));

  const bootstrapServers = await new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mock cluster did not start within 10 s: ${stderr}`)), 10_000);
    bootstrap = (servers) => {
      clearTimeout(timer);
      resolve(servers);
    };
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mock cluster exited with ${code}: ${stderr}`));
    });
  });

  // One command at a time: replies carry no id, so they are matched by order.
  let queue: Promise<unknown> = Promise.resolve();
  const command = (line: string): Promise<void> => {
    const next = queue.then(
      () =>
        new Promise<void>((resolve, reject) => {
          if (child.exitCode !== null || !child.stdin.writable) {
            reject(new Error('mock cluster is not running'));
            return;
          }
          replies.push((reply) => (reply === 'OK' ? resolve() : reject(new Error(`${line}: ${reply}`))));
          child.stdin.write(`${line}\n`);
        }),
    );
    queue = next.catch(() => undefined);
    return next;
  };

  let stopping: Promise<void> | undefined;
  return {
    bootstrapServers,
    command,
    createTopic: (name, partitions) => command(`topic ${name} ${partitions}`),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null) return;
        child.stdin.end();
        const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
        await exited;
        clearTimeout(killer);
      })();
      return stopping;
    },
  };
}
