/**
 * A mock Kafka cluster by hand:
 *
 *   npx tsx tools/mock-cluster/cli.ts --brokers 3 --topic test-results:6 --topic test-requests:3
 *
 * Prints the bootstrap list (comma-separated) as the only stdout line, then forwards every line
 * typed on stdin as a command (`down 1`, `up 1`, `rtt 1 500`, `error Produce 7`, `topic name 3`,
 * see mock-cluster.c) and reports OK or the error on stderr. Runs until SIGINT or SIGTERM.
 */
import { createInterface } from 'node:readline';
import { startMockCluster, type MockCluster, type MockClusterOptions } from './mock-cluster.js';

const USAGE = 'usage: cli.ts [--brokers N] [--topic NAME:PARTITIONS]...';

function parseArgs(argv: string[]): Required<MockClusterOptions> {
  const options: Required<MockClusterOptions> = { brokers: 1, topics: [], detached: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--help' || flag === '-h') {
      process.stderr.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (value === undefined || (flag !== '--brokers' && flag !== '--topic')) throw new Error(USAGE);
    i++;
    if (flag === '--brokers') {
      options.brokers = Number(value);
    } else {
      const colon = value.lastIndexOf(':');
      if (colon <= 0) throw new Error(`--topic wants NAME:PARTITIONS, got ${JSON.stringify(value)}`);
      options.topics.push({ name: value.slice(0, colon), partitions: Number(value.slice(colon + 1)) });
    }
  }
  return options;
}

let options: Required<MockClusterOptions>;
try {
  options = parseArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}

let cluster: MockCluster;
try {
  cluster = await startMockCluster(options);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}
process.stdout.write(`${cluster.bootstrapServers.join(',')}\n`);
if (process.stdin.isTTY) {
  process.stderr.write('Commands: down 1 | up 1 | rtt 1 500 | error Produce 7 | topic NAME 3 | leader TOPIC 0 2 ... Ctrl-C stops.\n');
}

// Stdin ending (e.g. started with </dev/null) does not stop the cluster; only a signal does.
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  if (line.trim() === '') return;
  cluster.command(line).then(
    () => process.stderr.write('OK\n'),
    (error: Error) => process.stderr.write(`ERR ${error.message}\n`),
  );
});

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void cluster.stop().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
void cluster.exited.then((exit) => {
  if (stopping) return;
  process.stderr.write(`mock cluster exited unexpectedly (${exit.signal ?? `code ${exit.code}`})\n`);
  process.exit(1);
});
