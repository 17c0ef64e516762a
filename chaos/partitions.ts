/**
 * Network partitions of one service replica from Redis or from Kafka, with nftables: each replica
 * runs as a user of its own, and a partition is a rule of the run's table that drops what that
 * user sends to the ports of the other side (`meta skuid`), so the replica's open connections go
 * silent and new ones time out, as behind a broken link, while everything else on the machine
 * still reaches both. Needs root and `nft` (Debian's nftables); without them there are none. Runs
 * side by side each have a table and users of their own (`partitionUid`).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** Each run's own table, named after its process, so that runs side by side (a smoke in a test run during a long run) never touch each other's rules. */
const TABLE_PREFIX = 'rcs_chaos_';
const TABLE = `${TABLE_PREFIX}${process.pid}`;

/** The partitions of a run. */
export interface Partitions {
  /** Drops what `uid` sends to `ports` until the returned heal is called. */
  cut(uid: number, ports: readonly number[]): Promise<() => Promise<void>>;
  /** Removes the run's table (every cut with it). Safe to call twice. */
  dispose(): Promise<void>;
}

/** Why partitions cannot be had here, or undefined when they can. */
export async function partitionsUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'the run is not root';
  try {
    await run('nft', ['--version']);
    return undefined;
  } catch {
    return '`nft` is not installed (Debian: apt-get install nftables)';
  }
}

/** True while process `pid` runs. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Creates the run's table, after removing those whose runs are gone (a run killed before its cleanup). */
export async function createPartitions(): Promise<Partitions> {
  const { stdout } = await run('nft', ['list', 'tables']);
  for (const [, pid] of stdout.matchAll(new RegExp(`^table inet ${TABLE_PREFIX}(\\d+)$`, 'gm'))) {
    if (!alive(Number(pid))) await run('nft', ['delete', 'table', 'inet', `${TABLE_PREFIX}${pid}`]).catch(() => undefined);
  }
  await run('nft', ['add', 'table', 'inet', TABLE]);
  await run('nft', ['add', 'chain', 'inet', TABLE, 'out', '{ type filter hook output priority 0; policy accept; }']);
  let disposed = false;
  return {
    async cut(uid, ports) {
      const comment = `cut-${uid}-${Date.now()}`;
      await run('nft', [
        'add',
        'rule',
        'inet',
        TABLE,
        'out',
        'meta',
        'skuid',
        String(uid),
        'tcp',
        'dport',
        `{ ${ports.join(', ')} }`,
        'drop',
        'comment',
        `"${comment}"`,
      ]);
      return async () => {
        if (disposed) return;
        const { stdout } = await run('nft', ['-a', 'list', 'chain', 'inet', TABLE, 'out']);
        const handle = new RegExp(`comment "${comment}" # handle (\\d+)`).exec(stdout)?.[1];
        if (handle !== undefined) await run('nft', ['delete', 'rule', 'inet', TABLE, 'out', 'handle', handle]);
      };
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await run('nft', ['delete', 'table', 'inet', TABLE]).catch(() => undefined);
    },
  };
}

/**
 * The user replica `n` (1, 2, 3) of this run runs as: its own, and no other run's (from the run's
 * process id), above any a Debian system hands out.
 */
export function partitionUid(n: number): number {
  return 200_000 + (process.pid % 100_000) * 4 + n;
}
