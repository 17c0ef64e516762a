/**
 * A real Apache Kafka cluster by hand (KRaft, one or three nodes, see kafka-cluster.ts):
 *
 *   npx tsx tools/kafka/cli.ts --nodes 3 --topic test-results:6 --topic test-requests:3 [--port 9092]
 *
 * Prints the bootstrap list (comma-separated) as the only stdout line, then runs each line typed
 * on stdin as a command and reports `OK` (with the answer, if any) or `ERR reason` on stderr:
 *   kill N                    SIGKILL node N
 *   stop N                    controlled shutdown of node N (SIGTERM)
 *   start N                   start node N again
 *   topic NAME PARTITIONS     create a topic (replicated to every node)
 *   leader TOPIC PARTITION    the node leading a partition
 *   coordinator GROUP         the node coordinating a consumer group
 * Runs until SIGINT or SIGTERM, then stops every node and removes the cluster's folder.
 */
import { createInterface } from 'node:readline';
import { startKafka, type KafkaCluster, type KafkaClusterOptions } from './kafka-cluster.js';

const USAGE = 'usage: cli.ts [--nodes 1|3] [--topic NAME:PARTITIONS]... [--port PORT]';
const COMMANDS = 'kill N | stop N | start N | topic NAME PARTITIONS | leader TOPIC PARTITION | coordinator GROUP';

function parseArgs(argv: readonly string[]): KafkaClusterOptions {
  let nodes: 1 | 3 = 1;
  let port: number | undefined;
  const topics: Array<{ name: string; partitions: number }> = [];
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--help' || flag === '-h') {
      process.stderr.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (value === undefined) throw new Error(USAGE);
    if (flag === '--nodes') {
      if (value !== '1' && value !== '3') throw new Error(`--nodes wants 1 or 3, got ${JSON.stringify(value)}`);
      nodes = value === '1' ? 1 : 3;
    } else if (flag === '--port') {
      port = Number(value);
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`--port wants a TCP port, got ${JSON.stringify(value)}`);
    } else if (flag === '--topic') {
      const colon = value.lastIndexOf(':');
      const partitions = Number(value.slice(colon + 1));
      if (colon <= 0 || !Number.isInteger(partitions) || partitions < 1) throw new Error(`--topic wants NAME:PARTITIONS, got ${JSON.stringify(value)}`);
      topics.push({ name: value.slice(0, colon), partitions });
    } else {
      throw new Error(USAGE);
    }
  }
  return { nodes, topics, ...(port === undefined ? {} : { port }) };
}

/** Runs one command line; resolves with the answer to print after OK ('' for none). */
async function run(cluster: KafkaCluster, line: string): Promise<string> {
  const [verb, ...args] = line.trim().split(/\s+/);
  const node = () => {
    const id = Number(args[0]);
    if (args.length !== 1 || !cluster.nodes.some((n) => n.id === id)) throw new Error(`${verb} wants a node id (${cluster.nodes.map((n) => n.id).join(', ')})`);
    return id;
  };
  const count = (what: string, min: number) => {
    const n = Number(args[1]);
    if (args.length !== 2 || !Number.isInteger(n) || n < min) throw new Error(`${verb} wants NAME ${what}`);
    return n;
  };
  switch (verb) {
    case 'kill':
      await cluster.killNode(node());
      return '';
    case 'stop':
      await cluster.stopNode(node());
      return '';
    case 'start':
      await cluster.startNode(node());
      return '';
    case 'topic':
      await cluster.createTopic(args[0] as string, count('PARTITIONS', 1));
      return '';
    case 'leader':
      return String(await cluster.leaderOf(args[0] as string, count('PARTITION', 0)));
    case 'coordinator':
      if (args.length !== 1) throw new Error('coordinator wants a group id');
      return String(await cluster.coordinatorOf(args[0] as string));
    default:
      throw new Error(`unknown command ${JSON.stringify(verb)}; commands: ${COMMANDS}`);
  }
}

let options: KafkaClusterOptions;
try {
  options = parseArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}

let cluster: KafkaCluster;
try {
  // The nodes get a process group of their own: a Ctrl-C reaches this process only, which stops them.
  cluster = await startKafka({ ...options, detached: true });
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}
process.stdout.write(`${cluster.bootstrapServers.join(',')}\n`);
process.stderr.write(`Apache Kafka ${cluster.version}, ${cluster.nodes.length} node(s); logs: ${cluster.nodes.map((n) => n.logFile).join(' ')}\n`);
if (process.stdin.isTTY) process.stderr.write(`Commands: ${COMMANDS}. Ctrl-C stops.\n`);

// One command at a time, in the order typed (`kill 1` then `start 1` must not overlap).
let queue = Promise.resolve();
// Stdin ending (e.g. started with </dev/null) does not stop the cluster; only a signal does.
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  if (line.trim() === '') return;
  queue = queue.then(() =>
    run(cluster, line).then(
      (answer) => void process.stderr.write(answer === '' ? 'OK\n' : `OK ${answer}\n`),
      (error: Error) => void process.stderr.write(`ERR ${error.message}\n`),
    ),
  );
});

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void cluster.stop().then(
    () => process.exit(0),
    (error: Error) => {
      process.stderr.write(`stopping failed: ${error.message}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
