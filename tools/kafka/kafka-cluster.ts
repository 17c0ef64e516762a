/**
 * Apache Kafka itself (KRaft, no ZooKeeper) on 127.0.0.1, one or three nodes, each a Java process
 * run from the jars fetch.sh keeps in .cache/kafka/. Used by the tests, the benchmarks and the
 * local stack. Every node is a combined broker and controller, so a three-node cluster keeps its
 * quorum with one node down.
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../../src/ingest/kafkajs-queue-timer.js';
import '../../src/ingest/kafkajs-stopped-fetch.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type Admin, type KafkaConfig } from 'kafkajs';
import { ensureKafkaJars, freePort, java, LOG4J, logTail, sleep, track } from './kafka-process.js';
import { nodeProperties, offsetsPartition, OFFSETS_PARTITIONS, type ListenerSpec } from './node-properties.js';

export { ensureKafkaJars, freePort } from './kafka-process.js';
export { offsetsPartition } from './node-properties.js';

const WATCHDOG = fileURLToPath(new URL('./watchdog.sh', import.meta.url));
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

/** A SCRAM credential created when the storage is formatted. */
export interface ScramUser {
  readonly mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  readonly name: string;
  readonly password: string;
}

/** What to start. */
export interface KafkaClusterOptions {
  /** Number of nodes, ids 1..N. Default 1. */
  readonly nodes?: 1 | 3;
  /** Topics created before the cluster is handed out. */
  readonly topics?: ReadonlyArray<{ name: string; partitions: number }>;
  /** Extra listeners besides PLAINTEXT (e.g. a SASL_SSL one), on ports of their own. */
  readonly listeners?: readonly ListenerSpec[];
  /** SCRAM users, added at format time. */
  readonly scramUsers?: readonly ScramUser[];
  /** Broker properties on top of the defaults (see node-properties.ts). */
  readonly properties?: Readonly<Record<string, string>>;
  /** PLAINTEXT port of node 1 (the others get free ports); default a free port. */
  readonly port?: number;
  /** Heap of each node. Default 512 MB, so three nodes fit a small machine. */
  readonly heapMb?: number;
  /** Working folder (storage, configuration, logs); default a new temporary folder, removed at stop. */
  readonly dir?: string;
  /** Where that temporary folder is made when `dir` is not given; default the system's temporary folder. */
  readonly parent?: string;
  /**
   * Runs the nodes in a process group of their own, so a Ctrl-C at the terminal reaches only this
   * process, which stops them when it chooses (the local stack stops the service first).
   */
  readonly detached?: boolean;
}

/** One running (or stopped) node. */
export interface KafkaNode {
  readonly id: number;
  /** `host:port` of each listener by name (PLAINTEXT, CONTROLLER and any extra ones). */
  readonly addresses: Readonly<Record<string, string>>;
  readonly running: boolean;
  readonly logFile: string;
}

/** A running cluster. */
export interface KafkaCluster {
  /** PLAINTEXT `host:port` of every node. */
  readonly bootstrapServers: string[];
  readonly nodes: readonly KafkaNode[];
  readonly version: string;
  /** `host:port` of every node on one listener (e.g. 'SASL_SSL'). */
  listenerServers(name: string): string[];
  /** Creates a topic (replication factor: every node) and waits for its leaders. */
  createTopic(name: string, partitions: number, config?: Record<string, string>): Promise<void>;
  /** The node leading one partition (-1 while none does). */
  leaderOf(topic: string, partition: number): Promise<number>;
  /** The node that coordinates a consumer group (the leader of its `__consumer_offsets` partition). */
  coordinatorOf(groupId: string): Promise<number>;
  /** Stops a node with SIGTERM (a controlled shutdown) and waits for it to exit. */
  stopNode(id: number): Promise<void>;
  /** Kills a node with SIGKILL and waits for it to exit. */
  killNode(id: number): Promise<void>;
  /** Starts a stopped node again and waits until it serves metadata. */
  startNode(id: number): Promise<void>;
  /** Freezes a running node (SIGSTOP): it holds its connections and answers nothing, as a node stalled by a long pause or a hung disk. */
  pauseNode(id: number): void;
  /** Thaws a frozen node (SIGCONT). */
  resumeNode(id: number): void;
  /** A kafkajs admin connected over PLAINTEXT to the running nodes (closed at stop). */
  admin(): Promise<Admin>;
  /** Stops every node (SIGTERM, then SIGKILL) and removes the working folder it made. Safe to call twice. */
  stop(): Promise<void>;
}

interface NodeState {
  readonly id: number;
  readonly dir: string;
  readonly addresses: Record<string, string>;
  child: ChildProcess | undefined;
  exited: Promise<void>;
}

/** How many times a cluster on free ports is started again when another process took one of them. */
const BIND_ATTEMPTS = 3;

/**
 * Starts a cluster and resolves once every node serves metadata and the topics have leaders.
 * Ports are picked free, then bound by the JVM a moment later: on a busy machine another process
 * can take one in between, so a start that fails to bind is tried again on fresh ports (unless the
 * caller fixed the port or the folder).
 */
export async function startKafka(options: KafkaClusterOptions = {}): Promise<KafkaCluster> {
  const retryable = options.port === undefined && options.dir === undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startKafkaOnce(options);
    } catch (error) {
      if (!retryable || attempt >= BIND_ATTEMPTS || !/BindException|Address already in use/.test(String(error))) throw error;
    }
  }
}

async function startKafkaOnce(options: KafkaClusterOptions): Promise<KafkaCluster> {
  const count = options.nodes ?? 1;
  const libs = await ensureKafkaJars();
  const version = /kafka\/([^/]+)\/libs$/.exec(libs)?.[1] ?? 'unknown';
  const ownDir = options.dir === undefined;
  const root = options.dir ?? (await mkdtemp(join(options.parent ?? tmpdir(), 'kafka-')));
  await mkdir(root, { recursive: true });
  const extra = options.listeners ?? [];
  const nodes: NodeState[] = [];
  for (let id = 1; id <= count; id++) {
    const addresses: Record<string, string> = {};
    addresses.PLAINTEXT = `127.0.0.1:${id === 1 && options.port !== undefined ? options.port : await freePort()}`;
    addresses.CONTROLLER = `127.0.0.1:${await freePort()}`;
    for (const listener of extra) addresses[listener.name] = `127.0.0.1:${await freePort()}`;
    nodes.push({ id, dir: join(root, `node-${id}`), addresses, child: undefined, exited: Promise.resolve() });
  }
  const voters = nodes.map((n) => `${n.id}@${n.addresses.CONTROLLER}`).join(',');
  const clusterId = await java(libs, ['kafka.tools.StorageTool', 'random-uuid']);
  const log4j = join(root, 'log4j2.properties');
  await writeFile(log4j, LOG4J);
  // The watchdog kills every node and removes the folder if this process dies without stopping them.
  const watchdog = spawn('bash', [WATCHDOG, String(process.pid), root, ownDir ? 'remove' : 'keep'], { stdio: 'ignore', detached: true });
  watchdog.unref();

  await Promise.all(
    nodes.map(async (node) => {
      await mkdir(join(node.dir, 'data'), { recursive: true });
      const properties = nodeProperties({
        id: node.id,
        nodes: count,
        dir: node.dir,
        addresses: node.addresses,
        voters,
        listeners: extra,
        overrides: options.properties ?? {},
      });
      await writeFile(join(node.dir, 'server.properties'), properties);
      const scram = (options.scramUsers ?? []).flatMap((u) => ['--add-scram', `${u.mechanism}=[name=${u.name},password=${u.password}]`]);
      await java(libs, ['kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', join(node.dir, 'server.properties'), ...scram]);
    }),
  );

  const heap = `-Xmx${options.heapMb ?? 512}m`;
  const launch = (node: NodeState) => {
    const child = spawn(
      'java',
      [
        heap,
        '-Xss1m',
        '-XX:+UseG1GC',
        '-Djava.awt.headless=true',
        `-Dlog4j2.configurationFile=${log4j}`,
        `-Dkafka.logs.dir=${node.dir}`,
        '-cp',
        `${libs}/*`,
        'kafka.Kafka',
        join(node.dir, 'server.properties'),
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: options.detached ?? false,
      },
    );
    track(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    node.child = child;
    node.exited = once(child, 'exit').then(() => {
      if (node.child === child) node.child = undefined;
    });
    void writeFile(join(node.dir, 'pid'), String(child.pid));
    return () => stderr;
  };

  const admins: Admin[] = [];
  const client = (servers: string[]): Kafka =>
    new Kafka({ clientId: 'kafka-cluster', brokers: servers, logLevel: logLevel.NOTHING, retry: { retries: 2 } } satisfies KafkaConfig);
  const serving = async (node: NodeState, stderr: () => string) => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (node.child === undefined)
        throw new Error(`Kafka node ${node.id} exited while starting: ${stderr().trim()}\n${await logTail(join(node.dir, 'server.log'))}`);
      const admin = client([node.addresses.PLAINTEXT as string]).admin();
      try {
        await admin.connect();
        const { brokers } = await admin.describeCluster();
        if (brokers.some((b) => b.nodeId === node.id)) return;
      } catch {
        // Not listening yet.
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
      if (Date.now() > deadline)
        throw new Error(`Kafka node ${node.id} did not serve metadata within ${START_TIMEOUT_MS / 1000} s; see ${join(node.dir, 'server.log')}`);
      await sleep(250);
    }
  };

  const stopAll = async () => {
    await Promise.all(admins.splice(0).map((a) => a.disconnect().catch(() => undefined)));
    await Promise.all(nodes.map((n) => stopOne(n, 'SIGTERM')));
    watchdog.kill('SIGTERM');
    if (ownDir) await rm(root, { recursive: true, force: true });
  };
  const stopOne = async (node: NodeState, signal: NodeJS.Signals) => {
    const child = node.child;
    if (child === undefined) return;
    child.kill(signal);
    // A frozen node takes its signal once thawed.
    child.kill('SIGCONT');
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await node.exited;
    clearTimeout(killer);
  };

  try {
    await Promise.all(nodes.map((node) => serving(node, launch(node))));
  } catch (error) {
    await stopAll();
    throw error;
  }

  const runningServers = () => nodes.filter((n) => n.child !== undefined).map((n) => n.addresses.PLAINTEXT as string);
  const admin = async () => {
    const a = client(runningServers()).admin();
    await a.connect();
    admins.push(a);
    return a;
  };
  const withAdmin = async <T>(body: (a: Admin) => Promise<T>): Promise<T> => {
    const a = client(runningServers()).admin();
    await a.connect();
    try {
      return await body(a);
    } finally {
      await a.disconnect().catch(() => undefined);
    }
  };
  const createTopic = (name: string, partitions: number, config: Record<string, string> = {}) =>
    withAdmin(async (a) => {
      // kafkajs's own waitForLeaders gives up on UNKNOWN_TOPIC_OR_PARTITION, which a KRaft broker
      // answers for a moment after its controller created the topic (seen on a busy machine).
      const created = await a.createTopics({
        topics: [
          { topic: name, numPartitions: partitions, replicationFactor: count, configEntries: Object.entries(config).map(([n, value]) => ({ name: n, value })) },
        ],
        waitForLeaders: false,
      });
      if (!created) throw new Error(`topic ${name} already exists`);
      await untilLeaders(a, name, partitions);
    });
  const leaderOf = (topic: string, partition: number) =>
    withAdmin(async (a) => {
      const { topics } = await a.fetchTopicMetadata({ topics: [topic] });
      return topics[0]?.partitions.find((p) => p.partitionId === partition)?.leader ?? -1;
    });

  try {
    for (const topic of options.topics ?? []) await createTopic(topic.name, topic.partitions);
  } catch (error) {
    await stopAll();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    bootstrapServers: nodes.map((n) => n.addresses.PLAINTEXT as string),
    version,
    get nodes() {
      return nodes.map((n) => ({ id: n.id, addresses: { ...n.addresses }, running: n.child !== undefined, logFile: join(n.dir, 'server.log') }));
    },
    listenerServers: (name) => nodes.map((n) => n.addresses[name] ?? missing(name)),
    createTopic,
    leaderOf,
    coordinatorOf: (groupId) =>
      leaderOf('__consumer_offsets', offsetsPartition(groupId, Number(options.properties?.['offsets.topic.num.partitions'] ?? OFFSETS_PARTITIONS))),
    stopNode: (id) => stopOne(find(nodes, id), 'SIGTERM'),
    killNode: (id) => stopOne(find(nodes, id), 'SIGKILL'),
    async startNode(id) {
      const node = find(nodes, id);
      if (node.child !== undefined) throw new Error(`Kafka node ${id} is running`);
      await serving(node, launch(node));
    },
    pauseNode: (id) => void find(nodes, id).child?.kill('SIGSTOP'),
    resumeNode: (id) => void find(nodes, id).child?.kill('SIGCONT'),
    admin,
    stop: () => (stopping ??= stopAll()),
  };
}

/** Waits until every partition of a new topic has a leader in the metadata the brokers serve. */
async function untilLeaders(admin: Admin, topic: string, partitions: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const found = topics[0]?.partitions ?? [];
      if (found.length === partitions && found.every((p) => p.leader >= 0)) return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error(`topic ${topic} has no leader for every partition after ${START_TIMEOUT_MS / 1000} s`);
    await sleep(100);
  }
}

function find(nodes: NodeState[], id: number): NodeState {
  const node = nodes.find((n) => n.id === id);
  if (node === undefined) throw new Error(`no Kafka node ${id}`);
  return node;
}

function missing(name: string): never {
  throw new Error(`no listener named ${name}`);
}
