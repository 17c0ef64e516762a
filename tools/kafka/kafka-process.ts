/**
 * The Java side of the test cluster: Kafka's jars (fetched once through Maven), running its tools,
 * and keeping track of its node processes so none outlives the process that started it.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const FETCH_SCRIPT = fileURLToPath(new URL('./fetch.sh', import.meta.url));

let fetching: Promise<string> | undefined;

/** The folder of Kafka's jars, fetched through Maven the first time. */
export function ensureKafkaJars(): Promise<string> {
  fetching ??= promisify(execFile)('bash', [FETCH_SCRIPT], { maxBuffer: 16 * 1024 * 1024 })
    .then(({ stdout }) => stdout.trim().split('\n').at(-1) as string)
    .catch((error: Error & { stderr?: string }) => {
      fetching = undefined;
      throw new Error(`fetching Kafka failed: ${error.message}\n${error.stderr ?? ''}`.trim());
    });
  return fetching;
}

/** Java processes still running, killed if this process exits without stopping them. */
const running = new Set<ChildProcess>();
let exitHook = false;

/** Kills `child` when this process exits, if it is still running then. */
export function track(child: ChildProcess): void {
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGKILL');
    });
  }
  running.add(child);
  void once(child, 'exit').then(() => running.delete(child));
}

/** Runs one of Kafka's Java tools and returns what it printed. */
export async function java(libs: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('java', ['-cp', `${libs}/*`, ...args], { maxBuffer: 4 * 1024 * 1024 });
    return stdout.trim();
  } catch (error) {
    const e = error as Error & { stderr?: string; stdout?: string };
    throw new Error(`java ${args.slice(0, 2).join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.trim(), { cause: error });
  }
}

/** The last lines of a node's log, for error messages. */
export async function logTail(file: string, lines = 30): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').slice(-lines).join('\n');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export { freePort } from '../free-port.js';

/** Each node logs to server.log in its own folder; requests and state changes are quiet. */
export const LOG4J = `status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = \${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.state.name = state.change.logger
logger.state.level = WARN
`;
