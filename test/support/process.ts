/**
 * The service as a real process (`node --import tsx src/app/main.ts`), for tests of what only a process
 * shows: signals, crashes, several replicas.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync } from 'node:fs';
import { eventually } from './graphql.js';
import { HS256_ENV } from './tokens.js';

/** A running service process. */
export interface ServiceProcess {
  readonly name: string;
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it logged so far (JSON lines). */
  output(): string;
  /** The partitions it was last assigned, from its "joined consumer group" log line. */
  assignment(): number[];
  /** Resolves when the process has exited, with its exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts a service process with `env` (plus the test issuer) and waits until it listens. `uid`: the
 * user it runs as (root only), so that firewall rules can single its connections out (`meta skuid`).
 * `logFile`: a file its output is also appended to (a long run keeps the logs of processes it killed).
 * `listenWithinMs` (30 s): how long it may take to listen (tsx compiles the sources as they load,
 * which on a machine loaded by a whole test run beside can take longer). `root`: the checkout whose
 * sources it runs (this one by default; the chaos run's upgrade runs an earlier release's).
 */
export async function spawnService(
  name: string,
  env: Record<string, string>,
  options: { readonly uid?: number; readonly logFile?: string; readonly listenWithinMs?: number; readonly root?: string } = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], {
    ...(options.root === undefined ? {} : { cwd: options.root }),
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '15000',
      RATE_LIMITS: 'off' /* as in startTestService; a test turns them on */,
      ...HS256_ENV,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const take = (chunk: Buffer) => {
    output += chunk.toString();
    if (options.logFile !== undefined) appendFileSync(options.logFile, chunk);
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  const exited = once(child, 'exit').then(([code]) => {
    running.delete(child);
    return code as number | null;
  });
  const port = await eventually(() => /"port":(\d+)/.exec(output)?.[1], options.listenWithinMs ?? 30_000, `${name} to listen`);
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    assignment() {
      const joins = output.split('\n').filter((line) => line.includes('"joined consumer group"'));
      const last = joins.at(-1);
      if (last === undefined) return [];
      const assignment = (JSON.parse(last) as { assignment: Record<string, number[]> }).assignment;
      return Object.values(assignment)
        .flat()
        .sort((a, b) => a - b);
    },
    exited,
    kill: (signal) => child.kill(signal),
  };
}

/** One answer of `GET /readyz`. */
export interface ReadyzAnswer {
  readonly status: number;
  readonly checks: Readonly<Record<string, string>>;
}

/** Asks a process's `/readyz`. */
export async function readyz(service: { readonly url: string }): Promise<ReadyzAnswer> {
  const response = await fetch(`${service.url}/readyz`);
  return { status: response.status, checks: ((await response.json()) as { checks: Record<string, string> }).checks };
}

/**
 * Waits until `GET /readyz` answers 200 and the consumers it reports (if any) have joined their
 * groups: an API-serving process is ready before that, and most tests need the consumer in.
 */
export async function waitReady(service: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  const joined = (check: string | undefined) => check === undefined || check === 'ok';
  await eventually(
    async () => {
      const { status, checks } = await readyz(service);
      return status === 200 && joined(checks.consumer) && joined(checks.requests);
    },
    timeoutMs,
    `${service.name} to be ready`,
  );
}

/** Reads one counter of `/metrics`. */
export async function metric(service: ServiceProcess, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  return Number(pattern.exec(text)?.[1] ?? Number.NaN);
}

/** A service process that stopped on its own, and everything it logged. */
export interface ExitedProcess {
  /** Its exit code (null when killed by a signal). */
  readonly code: number | null;
  readonly output: string;
}

/**
 * Runs `src/app/main.ts` with exactly `env` over this process's environment (no test defaults) until
 * it exits: for a start refused by its configuration (exit code 78).
 */
export async function runUntilExit(env: Record<string, string>): Promise<ExitedProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  running.delete(child);
  return { code, output };
}
