/**
 * deploy/compose.yaml's stack, booted from the built image where no engine can run its containers:
 * each service the file builds from the Dockerfile (the three replicas; the split profile's two API
 * processes and consumer) started as test/deploy/image.test.ts starts the image (its `CMD` as its
 * `USER`, read-only), with exactly the environment the file gives it. Only what names the compose
 * network's hosts and ports is replaced: `kafka:9092` and `redis:6379` by the tests' Apache Kafka
 * (the file's version) and the machine's Redis, the topics, group and Redis prefix by this run's own (other suites share
 * them), and `PORT` by a free port per service (no network namespace of their own here). Its
 * healthcheck passes for each (`/readyz`), a token of the file's HS256 issuer starts a test on one
 * replica, and the others serve and follow its results: the replicas share state through Redis as
 * the file intends. Kafka and Redis themselves are the upstream images, not booted here. (On
 * librdkafka's mock cluster, three members joining at once never leave JoinGroup, so Kafka it is.)
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { eventually, openEventStream } from '../support/graphql.js';
import * as img from '../support/image.js';
import { createTestProducer, result } from '../support/kafka.js';
import { KAFKA_BROKER, type TestBroker } from '../support/brokers.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { freePort, uniqueTopics } from '../support/service.js';
import { mintToken } from '../support/tokens.js';

const PREFIX = `compose-${randomUUID().slice(0, 8)}`;

/** A service of the compose file, as the file (merge keys resolved) gives it. */
interface ComposeService {
  readonly build?: unknown;
  readonly environment?: Record<string, string>;
  readonly profiles?: string[];
  readonly healthcheck?: { test: string[] };
}

let image: string;
let config: img.ImageConfig;
let mounted: img.MountedImage | undefined;
let cluster: TestBroker | undefined;
let secrets: string | undefined;
let services: Record<string, ComposeService>;
const booted = new Map<string, { url: string; run: img.BootedImage }>();
const topics = uniqueTopics('compose');

/** The file's environment for `name`, with the compose network's hosts, ports and shared names replaced by this run's. */
async function environmentOf(name: string, port: number): Promise<Record<string, string>> {
  const env = { ...services[name]?.environment };
  const replaced: Record<string, string> = {
    KAFKA_BROKERS: (cluster as TestBroker).bootstrapServers.join(','),
    REDIS_URL: 'redis://127.0.0.1:6379',
    KAFKA_RESULTS_TOPIC: topics.results,
    KAFKA_REQUESTS_TOPIC: topics.requests,
    KAFKA_GROUP_ID: topics.group,
    PORT: String(port),
  };
  for (const key of Object.keys(replaced)) expect(env, `${name} sets ${key}`).toHaveProperty(key);
  return { ...env, ...replaced, HOST: '127.0.0.1', REDIS_KEY_PREFIX: PREFIX };
}

/** Boots the file's service `name` from the image and waits for its healthcheck (`/readyz`). */
async function boot(name: string): Promise<string> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const run = img.bootImage({ image, config, secrets: secrets as string, ...(mounted === undefined ? {} : { mounted }), env: await environmentOf(name, port) });
  booted.set(name, { url, run });
  const exited = run.exited.then((code) => Promise.reject(new Error(`${name} exited with ${String(code)}`)));
  try {
    await Promise.race([eventually(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200, 120_000, `${name} to be ready`), exited]);
  } catch (error) {
    throw new Error(`${(error as Error).message}; it logged:\n${run.output()}`, { cause: error });
  }
  return url;
}

/** A token of the issuer the file configures (HS256, its shared secret). */
const tokenOf = (env: Record<string, string> | undefined) =>
  mintToken({ iss: env?.AUTH_ISSUER }, { secret: env?.AUTH_HS256_SECRET ?? '', expiresInSeconds: 600 });

beforeAll(async () => {
  services = (parse(await readFile('deploy/compose.yaml', 'utf8'), { merge: true }) as { services: Record<string, ComposeService> }).services;
  image = process.env.RCS_IMAGE ?? img.buildImage();
  config = img.imageConfig(image);
  if (!img.canRunContainers(image)) mounted = img.mountImage(image);
  // Apache Kafka, the version the file's kafka service runs, with the partitions it gives new topics.
  cluster = await KAFKA_BROKER.start([
    { name: topics.results, partitions: 6 },
    { name: topics.requests, partitions: 1 },
  ]);
  secrets = await mkdtemp(join(tmpdir(), 'compose-secrets-'));
}, 1_200_000);

afterAll(async () => {
  for (const { run } of booted.values()) {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
    await run.exited;
  }
  mounted?.unmount();
  await cluster?.stop();
  if (secrets !== undefined) await rm(secrets, { recursive: true, force: true });
  await deleteRedisKeys(`${PREFIX}:*`);
}, 60_000);

/**
 * Waits until the consumer of every booted service says `ok` in `/readyz` at once: services started
 * together join one consumer group, which rebalances at each join, and a record waits for the group
 * to settle.
 */
async function groupSettled(): Promise<void> {
  const consumerOf = async (url: string) => ((await (await fetch(`${url}/readyz`)).json()) as { checks: { consumer?: string } }).checks.consumer;
  const urls = [...booted.values()].filter(({ run }) => run.child.exitCode === null).map(({ url }) => url);
  let last: unknown[] = [];
  await eventually(
    async () => {
      last = await Promise.all(urls.map(consumerOf));
      return last.every((check) => check === undefined || check === 'ok');
    },
    120_000,
    'the consumer group to settle',
  ).catch((error: Error) => {
    throw new Error(`${error.message}: the consumers said ${JSON.stringify(last)}`, { cause: error });
  });
}

/** Starts a test on `starter`, produces its results, and reads them back on `reader` and over SSE on `follower`. */
async function startReadFollow(token: string, starter: string, reader: string, follower: string): Promise<void> {
  await groupSettled();
  const started = await fetch(`${starter}/tests`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(started.status).toBe(202);
  const id = ((await started.json()) as { correlationId: string }).correlationId;
  const stream = await openEventStream(follower, 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence final } }', { id }, { token });
  const producer = await createTestProducer((cluster as TestBroker).bootstrapServers);
  try {
    await producer.send(topics.results, [result(id, { sequence: 1 }), result(id, { sequence: 2, final: true })]);
  } finally {
    await producer.disconnect();
  }
  await stream.waitFor(2, 120_000).catch((error: Error) => {
    const logs = [...booted.entries()].map(([name, { run }]) => `--- ${name}:\n${run.output().slice(-4000)}`).join('\n');
    throw new Error(`${error.message}; the services logged:\n${logs}`, { cause: error });
  });
  expect(stream.events.filter((e) => e.event === 'next').map((e) => e.data.data.testMessages.sequence)).toEqual([1, 2]);
  stream.close();
  const read = await fetch(`${reader}/tests/${id}`, { headers: { authorization: `Bearer ${token}` } });
  expect(read.status).toBe(200);
  expect(((await read.json()) as { messageCount: number }).messageCount).toBe(2);
}

describe('deploy/compose.yaml, its services booted from the image', () => {
  it('builds every replica from the Dockerfile, with a healthcheck on /readyz', () => {
    const built = Object.entries(services).filter(([, service]) => service.build !== undefined);
    expect(built.map(([name]) => name).sort()).toEqual(['api-1', 'api-2', 'consumer', 'replica-1', 'replica-2', 'replica-3']);
    for (const [, service] of built) expect(service.healthcheck?.test.join(' ')).toMatch(/\/readyz/);
  });

  it('three replicas: each ready; a test started on one is read on another and followed on the third', async () => {
    // Together, as `docker compose up` starts them.
    const [one, two, three] = await Promise.all(['replica-1', 'replica-2', 'replica-3'].map(boot));
    await startReadFollow(await tokenOf(services['replica-1']?.environment), one as string, two as string, three as string);
  }, 600_000);

  it('the split profile: the consumer ready with no API, the two API processes serving what it stores', async () => {
    const split = Object.entries(services).filter(([, service]) => service.profiles?.includes('split'));
    expect(split.map(([name]) => name).sort()).toEqual(['api-1', 'api-2', 'consumer']);
    // The replicas above leave the group first, so that the split shape's consumer alone reads the results.
    const replicas = [...booted.entries()].filter(([name]) => name.startsWith('replica-'));
    await Promise.all(
      replicas.map(async ([, { run }]) => {
        run.child.kill('SIGTERM');
        expect(await run.exited).toBe(0);
      }),
    );
    const [consumer, api1, api2] = await Promise.all(['consumer', 'api-1', 'api-2'].map(boot));
    expect((await fetch(`${consumer}/graphql`, { method: 'POST' })).status).toBe(404);
    await startReadFollow(await tokenOf(services['api-1']?.environment), api1 as string, api2 as string, api1 as string);
  }, 600_000);
});
