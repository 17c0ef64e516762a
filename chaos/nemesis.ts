/**
 * The nemesis: faults on a seeded random schedule, one at a time and now and then two at once,
 * each healed before the next of its kind: a Kafka node killed (SIGKILL) and started again, the
 * consumer group's coordinator killed, a Kafka node or the coordinator frozen (SIGSTOP) past the
 * brokers' session timeout, a Redis primary killed or frozen past the cluster's node timeout, a
 * service replica killed or frozen past its timeouts, a replica cut off from Redis or from Kafka
 * by a network partition (partitions.ts; where the run can have them), and a rolling restart of
 * the replicas (a deploy). Each fault is logged in the history with its window.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultRecord, History } from './history.js';
import { TOPICS, type Replica, type Stack } from './stack.js';

/** A deterministic generator of numbers in [0, 1) from a seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A fault: what it hits and how, and what heals it. */
interface Fault {
  readonly kind: string;
  /** The part of the system it hits; two faults at once never hit the same part. */
  readonly part: 'kafka' | 'redis' | 'service';
  /** Injected only where the run can partition the network (partitions.ts). */
  readonly needsPartitions?: boolean;
  /** `wedged`: told of each replica that had not exited {@link EXIT_WITHIN_MS} after its SIGTERM (and was then killed, as an orchestrator would). */
  run(stack: Stack, pick: <T>(items: readonly T[]) => T, restartable: readonly Replica[], wedged: (replica: string) => void): Promise<string>;
}

/** How long a replica may take to exit after SIGTERM: its `SHUTDOWN_DELAY_MS` and `SHUTDOWN_TIMEOUT_MS` (3 + 15 s), and some. */
const EXIT_WITHIN_MS = 30_000;
/**
 * Stops `replica` with `signal` (killing it when it has not exited {@link EXIT_WITHIN_MS} after a
 * SIGTERM, and telling `wedged`), then starts it again from its `root` and waits until it is ready.
 */
export async function restartReplica(stack: Stack, replica: Replica, signal: 'SIGKILL' | 'SIGTERM', wedged: (replica: string) => void): Promise<void> {
  const running = replica.process;
  running?.kill(signal);
  if (running !== undefined && (await Promise.race([running.exited.then(() => true), sleep(EXIT_WITHIN_MS).then(() => false)])) === false) {
    wedged(replica.name);
    running.kill('SIGKILL');
    await running.exited;
  }
  replica.process = undefined;
  if (signal === 'SIGKILL') await sleep(2_000);
  await stack.startReplica(replica);
}

/**
 * A Kafka node frozen past the brokers' session timeout (9 s: the controller fences it, its
 * partitions get new leaders) and the clients' request timeout, then thawed: it comes back with
 * stale leadership it must give up.
 */
async function frozen(stack: Stack, id: number): Promise<void> {
  stack.kafka.pauseNode(id);
  try {
    await sleep(15_000);
  } finally {
    stack.kafka.resumeNode(id);
  }
}

/**
 * A replica cut off from `ports` for 20 s (past ioredis' and kafkajs' connection and request
 * timeouts, short of the consumer group's 30 s session), then joined again: a broken link, not a crash.
 */
async function cutOff(stack: Stack, replica: Replica, ports: readonly number[]): Promise<string> {
  if (stack.partitions === undefined || replica.uid === undefined) throw new Error('no partitions in this run');
  const heal = await stack.partitions.cut(replica.uid, ports);
  try {
    await sleep(20_000);
  } finally {
    await heal();
  }
  return replica.name;
}

const FAULTS: readonly Fault[] = [
  {
    kind: 'kafka node killed',
    part: 'kafka',
    async run(stack, pick) {
      const node = pick(stack.kafka.nodes.filter((n) => n.running));
      await stack.kafka.killNode(node.id);
      await sleep(10_000);
      await stack.kafka.startNode(node.id);
      return `node ${node.id}`;
    },
  },
  {
    kind: 'group coordinator killed',
    part: 'kafka',
    async run(stack) {
      const id = await stack.kafka.coordinatorOf(TOPICS.group);
      await stack.kafka.killNode(id);
      await sleep(10_000);
      await stack.kafka.startNode(id);
      return `node ${id}`;
    },
  },
  {
    kind: 'kafka node frozen',
    part: 'kafka',
    async run(stack, pick) {
      const node = pick(stack.kafka.nodes.filter((n) => n.running));
      await frozen(stack, node.id);
      return `node ${node.id}`;
    },
  },
  {
    kind: 'group coordinator frozen',
    part: 'kafka',
    async run(stack) {
      const id = await stack.kafka.coordinatorOf(TOPICS.group);
      await frozen(stack, id);
      return `node ${id}`;
    },
  },
  {
    kind: 'redis primary killed',
    part: 'redis',
    async run(stack, pick) {
      const node = await stack.redis.primaryOf(pick(['a', 'b', 'c', 'd']));
      await node.kill();
      await sleep(6_000);
      await node.restart();
      return node.address;
    },
  },
  {
    kind: 'redis primary frozen',
    part: 'redis',
    async run(stack, pick) {
      const node = await stack.redis.primaryOf(pick(['a', 'b', 'c', 'd']));
      node.pause();
      // Past the cluster's node timeout (2 s): its replica is promoted while it is frozen.
      await sleep(6_000);
      node.resume();
      await stack.redis.waitHealthy(60_000);
      return node.address;
    },
  },
  {
    kind: 'replica killed',
    part: 'service',
    async run(stack, pick, restartable, wedged) {
      const replica = pick(restartable);
      await restartReplica(stack, replica, 'SIGKILL', wedged);
      return replica.name;
    },
  },
  {
    kind: 'replica frozen',
    part: 'service',
    async run(stack, pick) {
      const replica = pick(stack.replicas);
      replica.process?.kill('SIGSTOP');
      // Past the load balancer's checks, the clients' dead-stream bound (10 s), and for the
      // consumer its group's session timeout (30 s), after which its partitions move... to nobody:
      // it is the only consumer, so they wait for it.
      await sleep(replica.role === 'consumer' ? 35_000 : 12_000);
      replica.process?.kill('SIGCONT');
      return replica.name;
    },
  },
  {
    kind: 'replica cut off from redis',
    part: 'service',
    needsPartitions: true,
    run: (stack, pick) => cutOff(stack, pick(stack.replicas), stack.ports.redis),
  },
  {
    kind: 'replica cut off from kafka',
    part: 'service',
    needsPartitions: true,
    run: (stack, pick) => cutOff(stack, pick(stack.replicas), stack.ports.kafka),
  },
  {
    kind: 'rolling restart',
    part: 'service',
    async run(stack, _pick, restartable, wedged) {
      for (const replica of restartable) await restartReplica(stack, replica, 'SIGTERM', wedged);
      return restartable.map((r) => r.name).join(', ');
    },
  },
];

/** A running nemesis. */
export interface Nemesis {
  /** Lets the faults under way heal, starts no more, resolves when they have. */
  stop(): Promise<void>;
}

/**
 * Starts injecting faults, the first after `firstAfterMs`; only those whose kind contains one of
 * `kinds`, when given. A replica named in `steady` is frozen
 * but never killed or restarted: one process that lives through the whole run, whose memory trend
 * means something.
 */
export function startNemesis(
  stack: Stack,
  history: History,
  options: { readonly seed: number; readonly steady?: string; readonly firstAfterMs?: number; readonly kinds?: readonly string[] },
  log: (line: string) => void,
): Nemesis {
  const wedged = (replica: string) => {
    history.wedged.push({ at: Date.now(), replica });
    log(`${replica} had not exited ${EXIT_WITHIN_MS / 1000} s after its SIGTERM: killed`);
  };
  const random = seededRandom(options.seed);
  const firstAfterMs = options.firstAfterMs ?? 10_000;
  const restartable = stack.replicas.filter((r) => r.name !== options.steady);
  const faults = FAULTS.filter(
    (fault) =>
      (fault.needsPartitions !== true || stack.partitions !== undefined) &&
      (options.kinds === undefined || options.kinds.length === 0 || options.kinds.some((word) => fault.kind.includes(word))),
  );
  if (faults.length === 0) throw new Error(`no fault's kind contains any of: ${options.kinds?.join(', ')}`);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  let running = true;
  const busy = new Set<Fault['part']>();
  const inFlight = new Set<Promise<void>>();

  const inject = (fault: Fault) => {
    busy.add(fault.part);
    const record: FaultRecord = { kind: fault.kind, target: '', start: Date.now(), end: undefined };
    history.faults.push(record);
    log(`fault: ${fault.kind}`);
    const done: Promise<void> = fault
      .run(stack, pick, restartable, wedged)
      .then((target) => Object.assign(record, { target }))
      .catch((error: unknown) => {
        record.failed = error instanceof Error ? error.message : String(error);
        log(`fault ${fault.kind} failed to run or heal: ${record.failed}`);
      })
      .then(() => {
        record.end = Date.now();
        busy.delete(fault.part);
        inFlight.delete(done);
        log(`healed: ${fault.kind} (${record.target}, ${((record.end - record.start) / 1000).toFixed(1)} s)`);
      });
    inFlight.add(done);
    return done;
  };

  const loop = (async () => {
    await sleep(firstAfterMs);
    while (running) {
      const first = pick(faults);
      const running1 = inject(first);
      // One time in four, a second fault on another part overlaps the first.
      if (random() < 0.25) {
        await sleep(1_000 + random() * 3_000);
        const second = pick(faults.filter((f) => !busy.has(f.part)));
        if (running && second !== undefined) void inject(second);
      }
      await running1;
      await Promise.all([...inFlight]);
      await sleep(5_000 + random() * 10_000);
    }
  })();

  return {
    stop: async () => {
      running = false;
      await loop;
      await Promise.all([...inFlight]);
    },
  };
}
