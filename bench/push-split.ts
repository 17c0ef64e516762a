/**
 * CPU per push split into user and system time, with system calls and context switches per push:
 * the service against the bare `ws` fan-out ceiling (without kafkajs's poll), on real Kafka, rounds
 * alternating. S_TESTS (10,000 tests, one subscriber each), S_RATE (100 records/s), S_SECONDS (10),
 * S_ROUNDS (2); S_PERF=1 counts system calls with `perf stat` (root). Usage: npx tsx bench/push-split.ts
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { startBroker } from './lib/broker.js';
import { runWorker, startWorker } from './lib/worker.js';
import { untilConsuming } from './lib/consuming.js';
import { BENCH_AUTH_ENV, benchToken } from './lib/token.js';
import { sleep } from './lib/until.js';

const TESTS = Number(process.env.S_TESTS ?? 10000);
const RATE = Number(process.env.S_RATE ?? 100);
const SECONDS = Number(process.env.S_SECONDS ?? 10);
const ROUNDS = Number(process.env.S_ROUNDS ?? 2);
const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
async function cpu(pid: number): Promise<[number, number]> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(f[11]) / TICK, Number(f[12]) / TICK];
}
async function ctx(pid: number): Promise<[number, number]> {
  const s = await readFile(`/proc/${pid}/status`, 'utf8');
  return [Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(s)?.[1]), Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(s)?.[1])];
}
const broker = await startBroker('kafka', 10);
const out: string[] = [];
try {
  for (let round = 0; round < ROUNDS; round++)
    for (const server of round % 2 === 0 ? ['service', 'bare ws'] : ['bare ws', 'service']) {
      const topic = `bench-split-${Date.now()}`;
      await broker.createTopic(topic, 6);
      const w =
        server === 'bare ws'
          ? startWorker('bare-ws-fanout', [broker.bootstrapServers.join(','), topic, '500', String(TESTS)], { BENCH_CEILING_IDLE_QUEUE: '1' })
          : startWorker('service', ['--tests', String(TESTS), '--messages', '0'], {
              ...BENCH_AUTH_ENV,
              KAFKA_BROKERS: broker.bootstrapServers.join(','),
              KAFKA_RESULTS_TOPIC: topic,
              KAFKA_GROUP_ID: `bench-s-${Date.now()}`,
              SUBSCRIPTION_QUEUE_LIMIT: '100000',
            });
      try {
        const { url, ids } = (await w.ready) as { url: string; ids: string[] };
        await untilConsuming(url);
        const records = RATE * SECONDS;
        const subs = startWorker('subscribers', [url, await benchToken(), '1', String(records), ...ids]);
        await subs.ready;
        const pid = w.child.pid as number;
        await sleep(2000);
        const [u0, s0] = await cpu(pid);
        const [v0, n0] = await ctx(pid);
        const perf =
          process.env.S_PERF === '1'
            ? spawn('perf', ['stat', '-e', 'raw_syscalls:sys_enter', '-p', String(pid), '-x', ','], { stdio: ['ignore', 'ignore', 'pipe'] })
            : undefined;
        let perfOut = '';
        perf?.stderr.on('data', (d) => (perfOut += String(d)));
        await runWorker('produce', [broker.bootstrapServers.join(','), topic, String(RATE), String(SECONDS), ...ids]);
        const result = (await subs.result) as { received: number; p99: number };
        const [u1, s1] = await cpu(pid);
        const [v1, n1] = await ctx(pid);
        if (perf) {
          perf.kill('SIGINT');
          await new Promise((r) => perf.once('close', r));
        }
        const syscalls = Number(
          perfOut
            .split('\n')
            .find((l) => l.includes('raw_syscalls'))
            ?.split(',')[0],
        );
        const per = (x: number) => ((x * 1e6) / result.received).toFixed(0);
        const line = `${server}: received ${result.received}, p99 ${result.p99}, user ${per(u1 - u0)} µs, sys ${per(s1 - s0)} µs per push; ctx vol ${((v1 - v0) / result.received).toFixed(2)} invol ${((n1 - n0) / result.received).toFixed(2)} per push; syscalls ${(syscalls / result.received).toFixed(1)} per push`;
        console.log(line);
        out.push(line);
      } finally {
        await w.stop();
      }
    }
} finally {
  await broker.stop();
}
console.log(out.join('\n'));
process.exit(0);
