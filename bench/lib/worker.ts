/**
 * Runs a benchmark worker in its own process (compiled, as the service is deployed: bench/lib/worker-build.ts),
 * so load and the system under test never share an event loop, and returns the JSON object the
 * worker prints last.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workerBuild } from './worker-build.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const alive = new Set<ChildProcess>();

/** Kills every worker still running (servers that were asked to stop but have not yet exited). */
export function killWorkers(): void {
  for (const child of alive) child.kill('SIGKILL');
}

/**
 * Starts `bench/workers/<name>.ts` and resolves with its final JSON line. With `timeoutMs`, a worker
 * still running by then is killed and the promise rejects, so a stalled measurement fails its
 * benchmark instead of holding the whole run.
 */
export function runWorker<T>(
  name: string,
  args: string[] = [],
  env: Record<string, string | undefined> = {},
  options: { expose?: boolean; timeoutMs?: number; cwd?: string } = {},
): Promise<T> {
  const child = startWorker(name, args, env, options);
  if (options.timeoutMs === undefined) return child.result as Promise<T>;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.child.kill('SIGKILL');
  }, options.timeoutMs);
  return (child.result as Promise<T>).then(
    (value) => (clearTimeout(timer), value),
    (error: unknown) => {
      clearTimeout(timer);
      throw timedOut ? new Error(`worker ${name} ${args.join(' ')} was still running after ${options.timeoutMs} ms`) : error;
    },
  );
}

/**
 * A long-running worker (a server): resolves `ready` with the first JSON line it prints. An `env` value left undefined removes that variable.
 * `cwd`: the checkout whose worker runs (another checkout's, to compare two trees), this one by default.
 */
export function startWorker(name: string, args: string[] = [], env: Record<string, string | undefined> = {}, options: { expose?: boolean; cwd?: string } = {}) {
  // BENCH_CPU_PROF=service,subscribers writes a CPU profile of those workers to bench/results/profiles/.
  const profile = (process.env.BENCH_CPU_PROF ?? '').split(',').includes(name) ? ['--cpu-prof', '--cpu-prof-dir=bench/results/profiles'] : [];
  const checkout = options.cwd ?? root;
  // Compiled, as the service is deployed (bench/lib/worker-build.ts says why not through tsx).
  const script = join(workerBuild(checkout), 'bench', 'workers', `${name}.js`);
  const child: ChildProcess = spawn(process.execPath, ['--expose-gc', ...profile, script, ...args], {
    cwd: checkout,
    // Servers run as they are deployed (NODE_ENV=production also turns off graphql-js's development checks).
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', options.expose ? 'inherit' : 'pipe'],
  });
  alive.add(child);
  child.once('exit', () => alive.delete(child));
  let out = '';
  let err = '';
  let firstLine: ((value: unknown) => void) | undefined;
  // A worker that exits before its first line (a crash at start) fails `ready` with its stderr
  // instead of leaving the harness waiting for it forever.
  const ready = new Promise<unknown>((resolve, reject) => {
    firstLine = resolve;
    child.once('exit', (code) => firstLine !== undefined && reject(new Error(`worker ${name} exited with ${code} before it was ready: ${err}`)));
  });
  ready.catch(() => undefined);
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    // Only a whole line: a long one (a server's seeded ids) arrives in several chunks.
    const line = out
      .split('\n')
      .slice(0, -1)
      .find((l) => l.startsWith('{'));
    if (line && firstLine) {
      firstLine(JSON.parse(line));
      firstLine = undefined;
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
  const result = new Promise<unknown>((resolve, reject) => {
    child.once('exit', (code) => {
      const lines = out
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      if (code !== 0 || lines.length === 0) reject(new Error(`worker ${name} exited with ${code}: ${err}`));
      else resolve(JSON.parse(lines.at(-1) as string));
    });
  });
  // Servers are stopped, not awaited: a worker that is stopped must not surface as an unhandled rejection.
  result.catch(() => undefined);
  const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
  /** Asks the worker to stop and resolves once it exited (killed after 10 s), so a profile it writes at exit is complete. */
  const stop = async () => {
    child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(kill);
  };
  return { child, ready, result, stop };
}

/** Percentile of sorted numbers. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
