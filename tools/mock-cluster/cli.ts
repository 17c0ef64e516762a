/**
 * A mock Kafka cluster by hand: `npx tsx tools/mock-cluster/cli.ts --brokers 3 --topic test-results:6`.
 * Prints the bootstrap list, then forwards each line typed on stdin as a fault command.
 */
import { createInterface } from 'node:readline';
import { startMockCluster } from './mock-cluster.js';

const args = process.argv.slice(2);
let brokers = 1;
const topics: Array<{ name: string; partitions: number }> = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--brokers') brokers = Number(args[++i]);
  else if (args[i] === '--topic') {
    const [name = '', partitions = '1'] = (args[++i] ?? '').split(':');
    topics.push({ name, partitions: Number(partitions) });
  }
}
const cluster = await startMockCluster({ brokers, topics });
process.stdout.write(`${cluster.bootstrapServers.join(',')}\n`);
process.stderr.write('Type commands (down 1, up 1, rtt 1 500, error Fetch 6, topic name 3); Ctrl-C stops.\n');
const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  if (line.trim() === '') return;
  cluster.command(line.trim()).then(
    () => process.stderr.write('OK\n'),
    (error: Error) => process.stderr.write(`${error.message}\n`),
  );
});
const stop = () => void cluster.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
