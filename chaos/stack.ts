/**
 * The chaos run's system, started with the project's own helpers: three Kafka nodes (replication
 * factor 3), a Redis Cluster of three primaries with a replica each, three service processes in
 * production mode sharing it (one `consumer`, two `api`, as docs/redis-and-replicas.md recommends
 * for a split deployment) with `REDIS_WAIT_REPLICAS=1`, and HAProxy (Debian's) in front of the two
 * API replicas with health checks on `/readyz`. Every part can be killed, frozen and started again
 * on the same address, which is what the nemesis does.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startKafka, type KafkaCluster } from '../tools/kafka/kafka-cluster.js';
import { freePort } from '../tools/free-port.js';
import { clusterEnv, startRedisCluster, type RedisCluster } from '../tools/redis/redis-cluster.js';
import { eventually } from '../test/support/graphql.js';
import { startLoadBalancer, type LoadBalancer } from '../test/support/haproxy.js';
import { spawnService, waitReady, type ServiceProcess } from '../test/support/process.js';
import { createPartitions, partitionUid, partitionsUnavailable, type Partitions } from './partitions.js';

/** The topics and the consumer group of a run. */
export const TOPICS = { results: 'chaos-results', requests: 'chaos-requests', group: 'chaos-service' } as const;

/** One service replica: its name, role, port, and the process now running it (or none while down). */
export interface Replica {
  readonly name: string;
  readonly role: 'consumer' | 'api';
  readonly port: number;
  /** The user it runs as, of its own when partitions can be had (their rules single it out by it). */
  readonly uid: number | undefined;
  /** The checkout whose sources it runs when (re)started: this one, or an earlier release's until an upgrade moves it. */
  root: string;
  process: ServiceProcess | undefined;
}

/** The running system. */
export interface Stack {
  readonly kafka: KafkaCluster;
  readonly redis: RedisCluster;
  readonly replicas: readonly Replica[];
  readonly lb: LoadBalancer;
  /** Network partitions of a replica from Redis or Kafka, when they can be had (root and nft). */
  readonly partitions: Partitions | undefined;
  /** Why there are none, when there are none. */
  readonly noPartitions: string | undefined;
  /** The ports a replica reaches Redis on (every node) and Kafka on (every node's client listener). */
  readonly ports: { readonly redis: readonly number[]; readonly kafka: readonly number[] };
  /** Starts a replica again on its port and waits until it is ready. */
  startReplica(replica: Replica): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts everything; `log` hears what is being started. Each replica's output, across its restarts,
 * is appended to `<logDir>/<replica>.log`. `root`: the checkout the replicas run at first (this one
 * by default; an earlier release's for an upgrade run, chaos/upgrade.ts).
 */
export async function startStack(log: (line: string) => void, logDir: string, options: { readonly root?: string } = {}): Promise<Stack> {
  const root = options.root ?? process.cwd();
  mkdirSync(logDir, { recursive: true });
  log('starting three Kafka nodes');
  const kafka = await startKafka({
    nodes: 3,
    topics: [
      { name: TOPICS.results, partitions: 6 },
      { name: TOPICS.requests, partitions: 3 },
    ],
  });
  log('starting a Redis Cluster (3 primaries, 3 replicas)');
  const redis = await startRedisCluster({ primaries: 3, replicasPerPrimary: 1 }).catch(async (error: unknown) => {
    await kafka.stop();
    throw error;
  });
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    ...clusterEnv(redis),
    REDIS_WAIT_REPLICAS: '1',
    REDIS_KEY_PREFIX: `chaos-${Date.now()}`,
    KAFKA_BROKERS: kafka.bootstrapServers.join(','),
    KAFKA_RESULTS_TOPIC: TOPICS.results,
    KAFKA_REQUESTS_TOPIC: TOPICS.requests,
    KAFKA_GROUP_ID: TOPICS.group,
    // A replica leaving is seen by the load balancer (two failed checks, a second apart) before its listener closes.
    SHUTDOWN_DELAY_MS: '3000',
  };
  const noPartitions = await partitionsUnavailable();
  if (noPartitions !== undefined) log(`no network partitions in this run: ${noPartitions}`);
  const partitions = noPartitions === undefined ? await createPartitions() : undefined;
  const uidOf = (n: number) => (partitions === undefined ? undefined : partitionUid(n));
  const replicas: Replica[] = [
    { name: 'consumer-1', role: 'consumer', port: await freePort(), uid: uidOf(1), root, process: undefined },
    { name: 'api-1', role: 'api', port: await freePort(), uid: uidOf(2), root, process: undefined },
    { name: 'api-2', role: 'api', port: await freePort(), uid: uidOf(3), root, process: undefined },
  ];
  const startReplica = async (replica: Replica) => {
    const uid = replica.uid === undefined ? {} : { uid: replica.uid };
    const logFile = join(logDir, `${replica.name}.log`);
    // Three processes compiling the sources at once, beside a test run, can take more than the tests' 30 s to listen.
    replica.process = await spawnService(
      replica.name,
      { ...env, SERVICE_ROLE: replica.role, PORT: String(replica.port) },
      { ...uid, logFile, listenWithinMs: 120_000, root: replica.root },
    );
    await waitReady(replica.process, 120_000);
  };
  const stopServices = async () => {
    for (const replica of replicas) replica.process?.kill('SIGKILL');
    await Promise.all(replicas.map((replica) => replica.process?.exited));
    await partitions?.dispose();
    await redis.stop();
    await kafka.stop();
  };
  const portOf = (address: string) => Number(address.slice(address.lastIndexOf(':') + 1));
  let lb: LoadBalancer;
  try {
    log('starting the service: one consumer, two API replicas');
    await Promise.all(replicas.map(startReplica));
    log('starting HAProxy in front of the API replicas');
    const api = replicas.filter((r) => r.role === 'api');
    // Checks as docs/operations.md recommends for production (a check may take 2 s, two failures
    // in a row take a replica out), every second: one slow answer on a loaded machine is not an outage.
    lb = await startLoadBalancer(
      api.map((r) => ({ name: r.name, port: r.port })),
      { everyMs: 1_000, fall: 2, timeoutMs: 2_000 },
    );
    // The load starts once HAProxy routes to every API replica, not while its first checks run.
    const balancer = lb;
    await eventually(async () => (await Promise.all(api.map((r) => balancer.isUp(r.name)))).every(Boolean), 30_000, 'HAProxy to have every API replica up');
  } catch (error) {
    await stopServices();
    throw error;
  }
  return {
    kafka,
    redis,
    replicas,
    lb,
    partitions,
    noPartitions,
    ports: { redis: redis.seeds.map(portOf), kafka: kafka.bootstrapServers.map(portOf) },
    startReplica,
    stop: async () => {
      writeFileSync(join(logDir, 'haproxy.log'), lb.log());
      await lb.stop();
      await stopServices();
    },
  };
}
