/**
 * Starts librdkafka's mock cluster (a real Kafka-protocol broker on 127.0.0.1, see mock-cluster.c)
 * as a child process and drives its fault injection over the child's stdin/stdout.
 * Used by the tests, the local stack and by hand through cli.ts.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const SOURCE = fileURLToPath(new URL('./mock-cluster.c', import.meta.url));
const BUILD_SCRIPT = fileURLToPath(new URL('./build.sh', import.meta.url));
const BINARY = fileURLToPath(new URL('../../.cache/bin/mock-cluster', import.meta.url));
const START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 2_000;
const STDERR_TAIL_CHARS = 8_000;
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;

/** What to start. */
export interface MockClusterOptions {
  /** Number of brokers, ids 1..N. Default 1. */
  brokers?: number;
  /** Topics created before the cluster is handed out (replication factor 1). */
  topics?: Array<{ name: string; partitions: number }>;
  /**
   * Runs the broker in a process group of its own, so a Ctrl-C at the terminal reaches only this
   * process, which stops the broker when it chooses (the local stack stops the service first).
   */
  detached?: boolean;
}

/** How the cluster process ended. */
export interface MockClusterExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running mock cluster. */
export interface MockCluster {
  /** e.g. ['127.0.0.1:39123', ...] */
  readonly bootstrapServers: string[];
  /**
   * Send one raw command line (see mock-cluster.c, e.g. `down 1`, `error Produce 7`); resolves on
   * OK, rejects with the ERR text. Commands are serialized.
   */
  command(line: string): Promise<void>;
  /** Creates a topic; rejects when it exists. kafkajs' admin.createTopics does not work here. */
  createTopic(name: string, partitions: number): Promise<void>;
  /** Ends the process (stdin EOF, then SIGKILL after 2 s); safe to call twice. */
  stop(): Promise<void>;
  /** Settles once the process has ended, whether through stop() or not. */
  readonly exited: Promise<MockClusterExit>;
}

let building: Promise<string> | undefined;

/**
 * Returns the path of the mock cluster binary, running build.sh only when the binary is missing or
 * older than its source (the common case is two stat calls).
 */
export function ensureMockClusterBinary(): Promise<string> {
  building ??= (async () => {
    const [bin, src] = await Promise.all([stat(BINARY).catch(() => undefined), stat(SOURCE).catch(() => undefined)]);
    if (bin && (!src || bin.mtimeMs >= src.mtimeMs)) return BINARY;
    try {
      const { stdout } = await promisify(execFile)('bash', [BUILD_SCRIPT], { maxBuffer: 16 * 1024 * 1024 });
      return stdout.trim().split('\n').at(-1) || BINARY;
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? '';
      throw new Error(`building the mock cluster failed: ${(error as Error).message}\n${stderr}`.trim(), { cause: error });
    }
  })().finally(() => {
    building = undefined;
  });
  return building;
}

// Children are killed when this process exits, so a crashed test run never leaves brokers behind.
// (If this process dies without running 'exit' handlers, the child sees stdin EOF and exits too.)
const running = new Set<ChildProcessWithoutNullStreams>();
let exitHookInstalled = false;
function track(child: ChildProcessWithoutNullStreams): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGKILL');
    });
  }
  running.add(child);
}

/** Starts a mock cluster and resolves once it listens, with its bootstrap list. */
export async function startMockCluster(options: MockClusterOptions = {}): Promise<MockCluster> {
  const brokers = options.brokers ?? 1;
  if (!Number.isInteger(brokers) || brokers < 1) throw new Error(`brokers must be a positive integer, got ${brokers}`);
  const args = ['--brokers', String(brokers)];
  for (const topic of options.topics ?? []) {
    checkTopic(topic.name, topic.partitions);
    args.push('--topic', `${topic.name}:${topic.partitions}`);
  }

  const binary = await ensureMockClusterBinary();
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: options.detached ?? false });
  track(child);

  let stderrTail = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
  });
  // Writes after the child died would otherwise surface as an unhandled EPIPE.
  child.stdin.on('error', () => {});

  let spawnError: Error | undefined;
  const exited = new Promise<MockClusterExit>((resolve) => {
    child.once('error', (error) => {
      spawnError = error;
      running.delete(child);
      resolve({ code: null, signal: null });
    });
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  const describeExit = (exit: MockClusterExit) =>
    spawnError
      ? `could not run ${binary}: ${spawnError.message}`
      : `mock cluster exited (${exit.signal ?? `code ${exit.code}`})${stderrTail ? `: ${stderrTail.trim()}` : ''}`;

  // Every line after BOOTSTRAP answers the oldest command still waiting.
  const waiting: Array<{ resolve: () => void; reject: (error: Error) => void; line: string }> = [];
  let onBootstrap: ((line: string) => void) | undefined;
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    if (onBootstrap) return onBootstrap(line);
    const pending = waiting.shift();
    if (!pending) return;
    if (line === 'OK') pending.resolve();
    else pending.reject(new Error(`${pending.line}: ${line.replace(/^ERR /, '')}`));
  });
  void exited.then((exit) => {
    for (const pending of waiting.splice(0)) pending.reject(new Error(`${pending.line}: ${describeExit(exit)}`));
  });

  let bootstrapServers: string[];
  try {
    bootstrapServers = await new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`mock cluster printed no bootstrap list within ${START_TIMEOUT_MS / 1000} s; stderr: ${stderrTail.trim() || '(empty)'}`)),
        START_TIMEOUT_MS,
      );
      onBootstrap = (line) => {
        if (!line.startsWith('BOOTSTRAP ')) return;
        clearTimeout(timer);
        resolve(line.slice('BOOTSTRAP '.length).trim().split(','));
      };
      void exited.then((exit) => {
        clearTimeout(timer);
        reject(new Error(describeExit(exit)));
      });
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    onBootstrap = undefined;
  }

  let queue: Promise<unknown> = Promise.resolve();
  let stopping: Promise<void> | undefined;
  let ended = false;
  void exited.then(() => {
    ended = true;
  });

  const command = (line: string): Promise<void> => {
    const trimmed = line.trim();
    if (trimmed === '' || /[\r\n]/.test(trimmed)) return Promise.reject(new Error(`not a single command line: ${JSON.stringify(line)}`));
    // One at a time: replies carry no id, and a failed command must not stall the ones after it.
    const result = queue.then(
      () =>
        new Promise<void>((resolve, reject) => {
          if (ended || stopping) return reject(new Error(`${trimmed}: mock cluster is not running`));
          waiting.push({ resolve, reject, line: trimmed });
          child.stdin.write(`${trimmed}\n`);
        }),
    );
    queue = result.catch(() => undefined);
    return result;
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (ended) return;
      child.stdin.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(killer);
    })();
    return stopping;
  };

  return {
    bootstrapServers,
    command,
    createTopic: (name, partitions) => {
      try {
        checkTopic(name, partitions);
      } catch (error) {
        return Promise.reject(error);
      }
      return command(`topic ${name} ${partitions}`);
    },
    stop,
    exited,
  };
}

function checkTopic(name: string, partitions: number): void {
  if (!TOPIC_NAME.test(name)) throw new Error(`invalid topic name ${JSON.stringify(name)} (letters, digits, '.', '_', '-')`);
  if (!Number.isInteger(partitions) || partitions < 1) throw new Error(`topic ${name}: partitions must be a positive integer, got ${partitions}`);
}
