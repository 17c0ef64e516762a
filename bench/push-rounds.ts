/**
 * The many-tests shape at fixed rates, the service and its ceiling (`bare-ws-fanout`) in alternate
 * rounds: each round runs every rate for both servers, the first server alternating, so that a
 * noisy minute falls on both. The step search (fanout.ts, `benchManyTests`) stops at a server's
 * first failed step after one repeat; near the machine's edge one step's p99 moves by 100 ms
 * between runs on either server, so a row there is read from several rounds instead.
 * Prints one JSON line per run (p99, CPU per push, idle CPU, pushes missing).
 *
 * Usage: npx tsx bench/push-rounds.ts [--broker=kafka|mock] [--shape=1000x10] [--rates=2000,4000,8000]
 * [--rounds=4] [--seconds=5]
 */
import { parseBrokerOption, startBroker } from './lib/broker.js';
import { runPushScenario, type PushServer } from './lib/push-scenario.js';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const [kind = 'mock'] = parseBrokerOption(process.argv, ['mock']);
const [tests, perTest] = option('shape', '1000x10').split('x').map(Number) as [number, number];
const rates = option('rates', '2000,4000,8000').split(',').map(Number);
const rounds = Number(option('rounds', '4'));
const seconds = Number(option('seconds', '5'));

const broker = await startBroker(kind, 15);
try {
  for (let round = 0; round < rounds; round++)
    for (const rate of rates) {
      const servers: PushServer[] = round % 2 === 0 ? ['bare ws', 'service'] : ['service', 'bare ws'];
      for (const server of servers) {
        const result = await runPushScenario(broker, {
          label: `${server} ${tests} × ${perTest} at ${rate}/s, round ${round + 1}`,
          server,
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
          server,
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
