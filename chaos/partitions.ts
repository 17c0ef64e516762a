/**
 * Network partitions of one service replica from Redis or from Kafka, with nftables: each replica
 * runs as a user of its own, and a partition is a rule of the run's table that drops what that
 * user sends to the ports of the other side (`meta skuid`), so the replica's open connections go
 * silent and new ones time out, as behind a broken link, while everything else on the machine
 * still reaches both. Needs root and `nft` (Debian's nftables); without them there are none.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const TABLE = 'rcs_chaos';

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

/** Creates the run's table (replacing one a crashed run left). */
export async function createPartitions(): Promise<Partitions> {
  await run('nft', ['delete', 'table', 'inet', TABLE]).catch(() => undefined);
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
