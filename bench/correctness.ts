/**
 * Correctness side by side: the same scripted scenarios against the service and the common-stack
 * peer (`peers/common-stack/`), over real connections on the benchmark's broker, each row saying
 * what the subscriber was observed to receive. A scenario that fails to run says so in its row.
 * The peer's client catches up the way that stack's clients do: it reads the stored messages with
 * a query and then subscribes (the peer's subscription has no replay and no cursor).
 */
import { Redis } from 'ioredis';
import type { BenchBroker } from './lib/broker.js';
import type { Row } from './ingest.js';
import {
  createRecordProducer,
  follow,
  startRelay,
  startSide,
  startTest,
  storedSequences,
  type Follower,
  type RecordProducer,
  type Side,
} from './lib/correctness-harness.js';
import { sleep, until } from './lib/until.js';

/** What a scenario saw on one side: a sentence, and how many pushes were missing, repeated or out of order. */
export interface Observation {
  readonly observed: string;
  readonly wrong: number;
}

/** Compares what a subscriber received with the sequences it should have got, once each, in order. */
export function tally(expected: readonly number[], received: readonly number[]): Observation {
  const counts = new Map<number, number>();
  for (const s of received) counts.set(s, (counts.get(s) ?? 0) + 1);
  const missing = expected.filter((s) => !counts.has(s));
  const repeated = [...counts].filter(([, n]) => n > 1).map(([s]) => s);
  const extra = received.length - counts.size;
  const backwards = received.filter((s, i) => i > 0 && s < (received[i - 1] as number)).length;
  const parts = [`${counts.size} of ${expected.length} received`];
  parts.push(missing.length === 0 ? 'none missing' : `missing ${missing.length} (${ranges(missing)})`);
  parts.push(extra === 0 ? 'none repeated' : `${extra} repeated (${ranges(repeated)})`);
  if (backwards > 0) parts.push(`${backwards} out of order`);
  return { observed: parts.join(', '), wrong: missing.length + extra + backwards };
}

/** `1, 2, 3, 7` → `1–3, 7`. */
function ranges(values: readonly number[]): string {
  const sorted = [...new Set(values)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] as number) + 1) j++;
    out.push(i === j ? String(sorted[i]) : `${sorted[i]}–${sorted[j]}`);
    i = j;
  }
  return out.join(', ');
}

const seq = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Everything a scenario gets. */
interface Context {
  readonly cluster: BenchBroker;
  readonly side: Side;
  readonly producer: RecordProducer;
  /** A fresh one-partition topic and consumer group. */
  fresh(): Promise<{ topic: string; group: string }>;
  /** A Redis key prefix of this scenario's own, removed afterwards. */
  readonly redisPrefix: string;
  /** The smoke run: toy sizes, so the scenarios keep running, their figures meaning nothing. */
  readonly smoke: boolean;
}

/** Waits until `follower` got sequence `last` or `ms` passed, then a little longer for stragglers and repeats. */
async function settle(follower: Follower, last: number, ms = 10_000): Promise<void> {
  await until(() => follower.sequences.includes(last), ms, `sequence ${last}`).catch(() => undefined);
  await sleep(500);
}

/** Produces `from..to`, one record per request, the last final: a stream for a client to join into. */
async function stream(c: Context, topic: string, id: string, from: number, to: number): Promise<void> {
  for (let s = from; s <= to; s++) {
    await c.producer.send(topic, id, [s], { final: s === to });
    await sleep(5);
  }
}

/** The peer's client: what `test.messages` holds after `afterSequence`, then a subscription. */
async function catchUp(c: Context, url: string, id: string, afterSequence = 0): Promise<{ read: number[]; live: Follower }> {
  const read = (await storedSequences(url, id)).filter((s) => s > afterSequence);
  return { read, live: await follow('peer', url, id) };
}

type Scenario = (c: Context) => Promise<Observation>;

const SCENARIOS: Array<[string, Scenario]> = [
  [
    'late joiner: 10 stored, joins while 30 more stream in (replay, then live)',
    async (c) => {
      const { topic, group } = await c.fresh();
      const server = await startSide(c.side, c.cluster, { topic, group });
      try {
        const id = await startTest(server.url);
        await c.producer.send(topic, id, seq(1, 10));
        await until(async () => (await server.counts()).stored >= 10, 20_000, '10 stored');
        const streaming = stream(c, topic, id, 11, 40);
        await sleep(50);
        const joined = c.side === 'service' ? { read: [], live: await follow('service', server.url, id) } : await catchUp(c, server.url, id);
        await streaming;
        await settle(joined.live, 40);
        await joined.live.dispose();
        return tally(seq(1, 40), [...joined.read, ...joined.live.sequences]);
      } finally {
        await server.stop();
      }
    },
  ],
  [
    'redelivered records: 1–10, then 4–10 again, then 11',
    async (c) => {
      const { topic, group } = await c.fresh();
      const server = await startSide(c.side, c.cluster, { topic, group });
      try {
        const id = await startTest(server.url);
        const f = await follow(c.side, server.url, id);
        await c.producer.send(topic, id, seq(1, 10));
        await c.producer.send(topic, id, seq(4, 10));
        await c.producer.send(topic, id, [11], { final: true });
        await settle(f, 11);
        await f.dispose();
        return tally(seq(1, 11), f.sequences);
      } finally {
        await server.stop();
      }
    },
  ],
  [
    'reconnect: gets 10 of 40 streamed, drops, reconnects 100 ms later',
    async (c) => {
      const { topic, group } = await c.fresh();
      const server = await startSide(c.side, c.cluster, { topic, group });
      try {
        const id = await startTest(server.url);
        const first = await follow(c.side, server.url, id);
        const streaming = stream(c, topic, id, 1, 40);
        await until(() => first.sequences.length >= 10, 20_000, '10 pushed');
        await first.dispose();
        await sleep(100);
        // What the first connection received before it closed, and the cursor of the last of those.
        const seen = [...first.sequences];
        const last = Math.max(...seen);
        const cursor = first.lastCursor();
        const again =
          c.side === 'service'
            ? { read: [], live: await follow('service', server.url, id, cursor === undefined ? {} : { after: cursor }) }
            : await catchUp(c, server.url, id, last);
        await streaming;
        await settle(again.live, 40);
        await again.live.dispose();
        return tally(seq(1, 40), [...seen, ...again.read, ...again.live.sequences]);
      } finally {
        await server.stop();
      }
    },
  ],
  [
    'two replicas sharing Redis: one consumes, the subscriber is on the other',
    async (c) => {
      const { topic, group } = await c.fresh();
      const consumer = await startSide(c.side, c.cluster, { topic, group, redisPrefix: c.redisPrefix });
      const other = await startSide(c.side, c.cluster, { topic, group, redisPrefix: c.redisPrefix, consume: false });
      try {
        const id = await startTest(other.url);
        const f = await follow(c.side, other.url, id);
        for (const part of [seq(1, 7), seq(8, 14), seq(15, 20)]) await c.producer.send(topic, id, part, { final: part.includes(20) });
        await settle(f, 20);
        await f.dispose();
        return tally(seq(1, 20), f.sequences);
      } finally {
        await Promise.all([consumer.stop(), other.stop()]);
      }
    },
  ],
  [
    'slow subscriber: stops reading while 10,000 records of 8 KB arrive, then reads again',
    async (c) => {
      const { topic, group } = await c.fresh();
      const server = await startSide(c.side, c.cluster, { topic, group });
      const relay = await startRelay(server.url);
      try {
        const id = await startTest(server.url);
        const fast = await follow(c.side, server.url, id);
        const slow = await follow(c.side, server.url, id, { via: relay.url });
        relay.stall();
        // 80 MB: more than the loopback sockets between server and relay buffer (their receive buffer
        // may grow to 32 MB here), so the server has to hold, drop or refuse the rest.
        const n = c.smoke ? 200 : 10_000;
        const rssBefore = await server.rss();
        // Requests of 50 records (400 KB), each once the last is stored: the mock broker keeps only a
        // few MB of a partition's log, and records a consumer has not read by then are gone.
        for (let from = 1; from <= n; from += 50) {
          await c.producer.send(topic, id, seq(from, Math.min(n, from + 49)), { final: from + 49 >= n, payloadBytes: 8000 });
          await until(async () => (await server.counts()).stored >= Math.min(n, from + 49), 30_000, `${from + 49} stored`);
        }
        await settle(fast, n, 60_000);
        await sleep(2000);
        const beforeResume = slow.sequences.length;
        const grown = Math.round(((await server.rss()) - rssBefore) / 2 ** 20);
        relay.resume();
        // Read until nothing more comes for 3 s.
        for (let before = -1; before !== slow.sequences.length;) {
          before = slow.sequences.length;
          await sleep(3000);
        }
        const f = tally(seq(1, n), fast.sequences);
        const s = tally(seq(1, n), slow.sequences);
        await Promise.all([fast.dispose(), slow.dispose()]);
        const end = slow.ended();
        return {
          observed: `the one reading: ${f.observed}; the slow one (${beforeResume} read while stalled): ${s.observed}${end === undefined ? '' : `, then ${end}`}; server RSS +${grown} MB while it stalled (its store included)`,
          wrong: f.wrong,
        };
      } finally {
        await relay.close();
        await server.stop();
      }
    },
  ],
  [
    'consumer killed after storing 10, before committing; a new one takes over',
    async (c) => {
      const { topic, group } = await c.fresh();
      const api = await startSide(c.side, c.cluster, { topic, group, redisPrefix: c.redisPrefix, consume: false });
      // The service commits every 10 minutes here, so a kill after storing is a kill before committing;
      // the peer kills itself inside its handler right after the tenth record was stored and published.
      const victim = await startSide(c.side, c.cluster, {
        topic,
        group,
        redisPrefix: c.redisPrefix,
        env: c.side === 'service' ? { KAFKA_COMMIT_INTERVAL_MS: '600000' } : { PEER_CRASH_AFTER_STORED: '10' },
      });
      let survivor: Awaited<ReturnType<typeof startSide>> | undefined;
      try {
        const id = await startTest(api.url);
        const f = await follow(c.side, api.url, id);
        await c.producer.send(topic, id, seq(1, 10));
        if (c.side === 'service') {
          await until(async () => (await victim.counts()).stored >= 10, 20_000, '10 stored');
          victim.kill();
        }
        await victim.exited;
        survivor = await startSide(c.side, c.cluster, { topic, group, redisPrefix: c.redisPrefix });
        const s = survivor;
        await until(
          async () => {
            const { stored, duplicate } = await s.counts();
            return stored + duplicate >= 10;
          },
          30_000,
          'the redelivery',
        ).catch(() => undefined);
        const again = await s.counts();
        await c.producer.send(topic, id, [11], { final: true });
        await settle(f, 11);
        await f.dispose();
        const t = tally(seq(1, 11), f.sequences);
        const stored = await storedSequences(api.url, id);
        return {
          observed: `${t.observed}; the new consumer read ${again.stored + again.duplicate} of the 10 again (${again.duplicate} recognised as stored); the store holds ${stored.length} messages`,
          wrong: t.wrong,
        };
      } finally {
        victim.kill();
        await Promise.all([api.stop(), survivor?.stop()]);
      }
    },
  ],
];

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  try {
    const keys = await redis.keys(`${prefix}*`);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  } finally {
    redis.disconnect();
  }
}

/** Runs every scenario against the service and then the peer; one row per scenario and side. */
export async function benchCorrectness(cluster: BenchBroker, smoke = false): Promise<Row[]> {
  const producer = await createRecordProducer(cluster);
  const rows: Row[] = [];
  const table: string[] = ['| Scenario | Service (observed) | Common-stack peer (observed) |', '|---|---|---|'];
  let n = 0;
  try {
    // CORRECTNESS_ONLY=<part of a name> runs the scenarios whose name contains it.
    for (const [name, scenario] of SCENARIOS.filter(([name]) => name.includes(process.env.CORRECTNESS_ONLY ?? ''))) {
      const cells: string[] = [];
      // The smoke run (CI) keeps every scenario working on the service, and the peer's side working
      // on the first scenario only: the peer is started, fed and followed the same way in each.
      const sides = smoke && table.length > 2 ? (['service'] as const) : (['service', 'peer'] as const);
      for (const side of sides) {
        const redisPrefix = `bench-correctness-${process.pid}-${n++}`;
        const context: Context = {
          cluster,
          side,
          producer,
          redisPrefix,
          smoke,
          fresh: async () => {
            const topic = `bench-correctness-${Date.now()}-${n}`;
            await cluster.createTopic(topic, 1);
            return { topic, group: `${topic}-group` };
          },
        };
        const began = Date.now();
        const seen = await scenario(context).catch((error: unknown): Observation => ({
          observed: `did not complete: ${error instanceof Error ? error.message : String(error)}`,
          wrong: Number.NaN,
        }));
        await deleteKeys(redisPrefix);
        console.error(`correctness (${Math.round((Date.now() - began) / 1000)} s): ${name}: ${side}: ${seen.observed}`);
        cells.push(seen.observed);
        rows.push({
          benchmark: 'correctness',
          variant: `${name}: ${side === 'service' ? 'service' : 'common-stack peer'}: ${seen.observed}`,
          value: seen.wrong,
          unit: 'wrong pushes',
          target: '0',
          met: seen.wrong === 0,
        });
      }
      if (cells.length === 1) cells.push('not run (smoke)');
      table.push(`| ${name} | ${cells.join(' | ')} |`);
    }
  } finally {
    await producer.disconnect();
  }
  console.error(table.join('\n'));
  return rows;
}
