/**
 * The chaos run's upgrade (`npm run chaos -- --upgrade-from=REF`): the replicas start on an earlier
 * release's code, and halfway through the run they are upgraded to this checkout's one at a time,
 * as a rolling deploy does (SIGTERM, the new code started on the same port and awaited ready before
 * the next), under the same workload and checker as every chaos run. What the new code must do
 * then: read everything the earlier release stored (its stored format, docs/redis-and-replicas.md),
 * run beside it while the roll lasts, and lose nothing nor hand a follower anything twice.
 *
 * The earlier release is taken from this repository's history (`git archive` of REF) into
 * `.cache/releases/<commit>/`, kept between runs; it gets this checkout's node_modules when its
 * lock file is the same, its own `npm ci` otherwise.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FaultRecord, History } from './history.js';
import { restartReplica } from './nemesis.js';
import type { Replica, Stack } from './stack.js';

/** The commit REF names, in full; throws when the repository has no such commit. */
export function resolveCommit(ref: string): string {
  return execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
}

/** A checkout of `ref` that can run the service, made once per commit; answers its directory. */
export function checkoutRelease(ref: string, log: (line: string) => void): string {
  const commit = resolveCommit(ref);
  const dir = resolve('.cache/releases', commit);
  if (existsSync(join(dir, '.ready'))) return dir;
  log(`preparing the release to upgrade from: ${ref} (${commit.slice(0, 12)}) in ${dir}`);
  // Made beside its final place and moved there whole, so that an interrupted run leaves nothing half made.
  const making = `${dir}.making`;
  rmSync(making, { recursive: true, force: true });
  mkdirSync(making, { recursive: true });
  execFileSync('sh', ['-c', `git archive --format=tar "${commit}" | tar -x -C "${making}"`], { stdio: 'inherit' });
  const sameLock = readFileSync(join(making, 'package-lock.json'), 'utf8') === readFileSync('package-lock.json', 'utf8');
  if (sameLock) symlinkSync(resolve('node_modules'), join(making, 'node_modules'));
  else execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: making, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('touch', [join(making, '.ready')]);
  rmSync(dir, { recursive: true, force: true });
  renameSync(making, dir);
  return dir;
}

/** The order of a rolling upgrade: the API replicas one at a time, then the consumer (each its own Deployment in the split manifests). */
function rollingOrder(replicas: readonly Replica[]): Replica[] {
  return [...replicas.filter((r) => r.role === 'api'), ...replicas.filter((r) => r.role !== 'api')];
}

/**
 * Moves every replica of `stack` onto the code at `root`, one at a time, each ready before the next
 * is stopped; the roll is one window in the history (`rolling upgrade`), like the nemesis' faults.
 */
export async function rollingUpgrade(stack: Stack, history: History, root: string, from: string, log: (line: string) => void): Promise<void> {
  const record: FaultRecord = { kind: 'rolling upgrade', target: `${from} to this checkout`, start: Date.now(), end: undefined };
  history.faults.push(record);
  log(`rolling upgrade from ${from}`);
  const wedged = (replica: string) => {
    history.wedged.push({ at: Date.now(), replica });
    log(`${replica} had not exited after its SIGTERM during the upgrade: killed`);
  };
  for (const replica of rollingOrder(stack.replicas)) {
    replica.root = root;
    await restartReplica(stack, replica, 'SIGTERM', wedged);
    log(`upgraded: ${replica.name}`);
  }
  record.end = Date.now();
  log(`rolling upgrade done in ${((record.end - record.start) / 1000).toFixed(1)} s`);
}
