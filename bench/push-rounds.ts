/**
 * The many-tests shape at fixed rates, the service and its ceiling (`bare-ws-fanout`) in alternate
 * rounds: each round runs every rate for both servers, the first server alternating, so that a
 * noisy minute falls on both. The step search (fanout.ts, `benchManyTests`) stops at a server's
 * first failed step after one repeat; near the machine's edge one step's p99 moves by 100 ms
 * between runs on either server, so a row there is read from several rounds instead.
 * Prints one JSON line per run (p99, CPU per push, idle CPU, pushes missing).
 *
 * With `--before=<checkout>` (a `git worktree` of another commit with this one's node_modules linked
 * in) that checkout's service runs in each round too, as `service before`, the three servers in
 * each of their six orders over six rounds (`lib/round-order.ts`): a change's before and after
 * beside the ceiling in one run.
 *
 * Usage: npx tsx bench/push-rounds.ts [--broker=kafka|mock] [--shape=1000x10] [--rates=2000,4000,8000]
 * [--rounds=4] [--seconds=5] [--before=<checkout>]
 */
import { parseBrokerOption, startBroker } from './lib/broker.js';
import { runPushScenario, type PushServer } from './lib/push-scenario.js';
import { roundOrder } from './lib/round-order.js';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const [kind = 'mock'] = parseBrokerOption(process.argv, ['mock']);
const [tests, perTest] = option('shape', '1000x10').split('x').map(Number) as [number, number];
const rates = option('rates', '2000,4000,8000').split(',').map(Number);
const rounds = Number(option('rounds', '4'));
const seconds = Number(option('seconds', '5'));
const before = option('before', '');

/** One server of a round: the ceiling, this checkout's service, or the service of `--before`. */
interface Contender {
  readonly name: string;
  readonly server: PushServer;
  readonly checkout?: string;
}
const contenders: Contender[] = [
  { name: 'bare ws', server: 'bare ws' },
  { name: 'service', server: 'service' },
  ...(before === '' ? [] : [{ name: 'service before', server: 'service' as const, checkout: before }]),
];

const broker = await startBroker(kind, 15);
try {
  for (let round = 0; round < rounds; round++)
    for (const rate of rates) {
      for (const { name, server, checkout } of roundOrder(contenders, round)) {
        const result = await runPushScenario(broker, {
          label: `${name} ${tests} × ${perTest} at ${rate}/s, round ${round + 1}`,
          server,
          ...(checkout === undefined ? {} : { checkout }),
          tests,
          subscribersPerTest: perTest,
          rate,
          seconds,
          subscribersTimeoutMs: seconds * 1000 + 30_000,
        });
        const line = {
          broker: kind,
          shape: `${tests}x${perTest}`,
          round: round + 1,
          server: name,
          rate,
          p99: result.p99,
          cpuPerPushUs: Number(result.cpuPerPushUs.toFixed(2)),
        };
        console.log(JSON.stringify({ ...line, idleCpuMsPerS: result.idleCpuMsPerS, missing: result.expected - result.received }));
      }
    }
} finally {
  await broker.stop();
}
process.exit(0);
