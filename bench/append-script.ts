/**
 * Redis's own CPU per message of the Redis log's append script (src/log/redis-append-script.ts)
 * against its ceiling, one pipelined `RPUSH` per message, on the machine's Redis (REDIS_URL): the
 * script as the store's format 2 calls it (a run of sequences, redis-sequence-run.ts) and as
 * format 1 calls it (a field per message), in alternate rounds. The calls are shaped like the
 * ingest benchmark's chunks (2,000 messages over 83 tests, sequences counting up, ~200-byte texts);
 * Redis's CPU is read from `INFO cpu` around each round. Prints the medians in µs per message as JSON.
 *
 * Usage: npx tsx bench/append-script.ts [rounds, default 6] (BENCH_CALLS: calls per round, 200)
 */
import { Redis } from 'ioredis';
import { APPEND } from '../src/log/redis-append-script.js';
import { median } from './lib/median.js';

const rounds = Number(process.argv[2] ?? 6);
const calls = Number(process.env.BENCH_CALLS ?? 200);
const TESTS = 83;
const PER_TEST = 24;
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const sha = String(await redis.script('LOAD', APPEND));

/** Redis's CPU seconds so far, user and system. */
const cpu = async (): Promise<number> => {
  const info = await redis.info('cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]);
};
const text = (sequence: number) =>
  `{"key":"s:${sequence}","messageId":null,"sequence":${sequence},"status":"RUNNING","final":false,"payload":{"step":${sequence},"progress":0.5,"note":"xxxxxxxxxxxxxxxxxxxxxxxx"},"producedAt":null,"receivedAt":${Date.now()}}`;

/**
 * `format 2` passes each test's messages as a run (their first sequence, then their texts), as
 * redis-append.ts does for consecutive sequences; `format 2 singly` passes 3 arguments a message
 * (what it does for any other keys); `format 1` a field per message.
 */
type Mode = 'ceiling' | 'format 2' | 'format 2 singly' | 'format 1';

/** One call's worth of messages in `mode`, the tests' sequences from `from` on. */
async function send(mode: Mode, prefix: string, from: number): Promise<void> {
  if (mode === 'ceiling') {
    const pipeline = redis.pipeline();
    for (let t = 0; t < TESTS; t++) for (let m = 0; m < PER_TEST; m++) pipeline.rpush(`${prefix}:{t${t}}:msgs`, text(from + m));
    await pipeline.exec();
    return;
  }
  // The arguments as src/log/redis-append.ts passes them (its header comment in the script's).
  const runs = mode !== 'format 1';
  const keys: string[] = [];
  const args: Array<string | number> = [Date.now(), 3600, 100_000, 'PUBLISH', runs ? 1 : 0];
  for (let t = 0; t < TESTS; t++) {
    keys.push(`${prefix}:{t${t}}:meta`, `${prefix}:{t${t}}:msgs`);
    args.push(`t${t}`, `${prefix}:{t${t}}:notices`, `${prefix}:changes`, PER_TEST, 0);
    if (mode === 'format 2') {
      args.push(from);
      for (let m = 0; m < PER_TEST; m++) args.push(text(from + m));
      continue;
    }
    args.push('');
    for (let m = 0; m < PER_TEST; m++) args.push(runs ? '' : `~s:${from + m}`, from + m, text(from + m));
  }
  await redis.evalsha(sha, keys.length, ...keys, ...args);
}

/** Redis's CPU µs per message over one round of `mode`, its keys deleted after. */
async function round(mode: Mode, index: number): Promise<number> {
  const prefix = `bench-append-${process.pid}-${index}-${mode.replaceAll(' ', '')}`;
  const before = await cpu();
  for (let call = 0; call < calls; call++) await send(mode, prefix, call * PER_TEST);
  const used = (await cpu()) - before;
  const stream = redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>;
  for await (const found of stream) if (found.length > 0) await redis.unlink(...found);
  return (used * 1e6) / (calls * TESTS * PER_TEST);
}

const modes: Mode[] = ['ceiling', 'format 2', 'format 2 singly', 'format 1'];
const perMessage = new Map<Mode, number[]>(modes.map((mode) => [mode, []]));
for (let r = 0; r < rounds; r++) for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) perMessage.get(mode)?.push(await round(mode, r));
const medians = Object.fromEntries(modes.map((mode) => [mode, Number(median(perMessage.get(mode) ?? []).toFixed(2))]));
console.log(JSON.stringify({ redisCpuUsPerMessage: medians, rounds: Object.fromEntries(perMessage) }, null, 1));
redis.disconnect();
