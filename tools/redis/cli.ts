/**
 * A real Redis Cluster or Sentinel set by hand (see redis-cluster.ts and redis-sentinel.ts):
 *
 *   npx tsx tools/redis/cli.ts cluster [--primaries N] [--replicas N] [--password P]
 *   npx tsx tools/redis/cli.ts sentinel [--sentinels N] [--master-name NAME] [--password P]
 *
 * Prints the service's settings for it as the only stdout line (e.g. `STATE_STORE=redis
 * REDIS_MODE=cluster REDIS_CLUSTER_NODES=127.0.0.1:p1,...`), then runs each line typed on stdin
 * as a command and reports `OK` (with the answer, if any) or `ERR reason` on stderr:
 *   kill PORT | stop PORT | restart PORT | pause PORT | resume PORT   a fault on one server
 *   role PORT         master or slave
 *   primary [KEY]     the primary of KEY's slot (cluster) or the current primary (sentinel)
 *   health            waits until the topology is healthy again
 * Runs until SIGINT or SIGTERM, then stops every process and removes the folder.
 */
import { createInterface } from 'node:readline';
import { clusterEnv, sentinelEnv, startRedisCluster, startRedisSentinel, type RedisNode } from './redis-cluster.js';

const USAGE = 'usage: cli.ts cluster [--primaries N] [--replicas N] [--password P] | sentinel [--sentinels N] [--master-name NAME] [--password P]';
const COMMANDS = 'kill PORT | stop PORT | restart PORT | pause PORT | resume PORT | role PORT | primary [KEY] | health';

/** What the command line asks for, whichever the topology. */
interface Topology {
  readonly env: Record<string, string>;
  readonly nodes: readonly RedisNode[];
  readonly dir: string;
  primary(key: string | undefined): Promise<RedisNode>;
  waitHealthy(): Promise<void>;
  stop(): Promise<void>;
}

function parseArgs(argv: readonly string[]): { kind: 'cluster' | 'sentinel'; flags: Map<string, string> } {
  const [kind, ...rest] = argv;
  if (kind === '--help' || kind === '-h') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (kind !== 'cluster' && kind !== 'sentinel') throw new Error(USAGE);
  const allowed = kind === 'cluster' ? ['--primaries', '--replicas', '--password'] : ['--sentinels', '--master-name', '--password'];
  const flags = new Map<string, string>();
  for (let i = 0; i < rest.length; i += 2) {
    const flag = rest[i] as string;
    const value = rest[i + 1];
    if (!allowed.includes(flag) || value === undefined) throw new Error(USAGE);
    if (flag !== '--password' && flag !== '--master-name' && !(Number.isInteger(Number(value)) && Number(value) >= 0))
      throw new Error(`${flag} wants a whole number, got ${JSON.stringify(value)}`);
    flags.set(flag, value);
  }
  return { kind, flags };
}

async function start(kind: 'cluster' | 'sentinel', flags: Map<string, string>): Promise<Topology> {
  const number = (flag: string) => (flags.has(flag) ? Number(flags.get(flag)) : undefined);
  const password = flags.get('--password');
  // Process groups of their own: a Ctrl-C reaches this process only, which stops them.
  if (kind === 'cluster') {
    const cluster = await startRedisCluster({ primaries: number('--primaries'), replicasPerPrimary: number('--replicas'), password, detached: true });
    return {
      ...cluster,
      env: clusterEnv(cluster),
      primary: (key) => (key === undefined ? Promise.reject(new Error('primary wants a KEY on a cluster')) : cluster.primaryOf(key)),
    };
  }
  const set = await startRedisSentinel({ sentinels: number('--sentinels'), masterName: flags.get('--master-name'), password, detached: true });
  return { ...set, env: sentinelEnv(set), primary: () => set.primary() };
}

/** Runs one command line; resolves with the answer to print after OK ('' for none). */
async function run(topology: Topology, line: string): Promise<string> {
  const [verb, ...args] = line.trim().split(/\s+/);
  const node = () => {
    const found = topology.nodes.find((n) => n.port === Number(args[0]));
    if (args.length !== 1 || found === undefined) throw new Error(`${verb} wants a server's port (${topology.nodes.map((n) => n.port).join(', ')})`);
    return found;
  };
  switch (verb) {
    case 'kill':
      return node()
        .kill()
        .then(() => '');
    case 'stop':
      return node()
        .stop()
        .then(() => '');
    case 'restart':
      return node()
        .restart()
        .then(() => '');
    case 'pause':
      node().pause();
      return '';
    case 'resume':
      node().resume();
      return '';
    case 'role':
      return node().role();
    case 'primary':
      return (await topology.primary(args[0])).address;
    case 'health':
      return topology.waitHealthy().then(() => 'healthy');
    default:
      throw new Error(`unknown command ${JSON.stringify(verb)}; commands: ${COMMANDS}`);
  }
}

let topology: Topology;
try {
  const { kind, flags } = parseArgs(process.argv.slice(2));
  topology = await start(kind, flags).catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  });
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}
process.stdout.write(
  `${Object.entries(topology.env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}\n`,
);
process.stderr.write(`Servers: ${topology.nodes.map((n) => n.address).join(' ')}; data and logs under ${topology.dir}\n`);
if (process.stdin.isTTY) process.stderr.write(`Commands: ${COMMANDS}. Ctrl-C stops.\n`);

// One command at a time, in the order typed (`kill P` then `restart P` must not overlap).
let queue = Promise.resolve();
// Stdin ending (e.g. started with </dev/null) does not stop the topology; only a signal does.
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  if (line.trim() === '') return;
  queue = queue.then(() =>
    run(topology, line).then(
      (answer) => void process.stderr.write(answer === '' ? 'OK\n' : `OK ${answer}\n`),
      (error: Error) => void process.stderr.write(`ERR ${error.message}\n`),
    ),
  );
});

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void topology.stop().then(
    () => process.exit(0),
    (error: Error) => {
      process.stderr.write(`stopping failed: ${error.message}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
