/**
 * The built image boots as an operator runs it: its `CMD` as its `USER` (non-root) from its own
 * filesystem, read-only, with the production settings it carries (NODE_ENV=production) and the
 * embedded issuer's keys, against the mock cluster and the machine's Redis. It answers its probes,
 * starts a test for an RS256 token of its own issuer, serves the results the external system produced
 * by GET and over SSE, and drains on SIGTERM within the manifests' grace period. Its runtime
 * dependencies are complete, its SBOM names exactly what it installed, and its size over its base is
 * within the budget docs/operations.md states.
 *
 * scripts/test.sh builds the image first and passes its name in RCS_IMAGE; alone, the file builds
 * it (scripts/build-image.sh; cached layers make that cheap after the first time).
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingRuntimeImports } from '../../scripts/check-runtime-deps.js';
import type { MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { eventually, openEventStream } from '../support/graphql.js';
import * as img from '../support/image.js';
import { createTestProducer, result } from '../support/kafka.js';
import { startTopicsCluster } from '../support/mock-service.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { freePort, uniqueTopics } from '../support/service.js';

const PREFIX = `image-${randomUUID().slice(0, 8)}`;
const CLIENT = { client_id: 'worker', client_secret: 'worker-secret-of-some-length', grant_types: ['client_credentials'], scope: 'tests:read tests:write' };
const MANIFESTS = ['deploy/kubernetes/result-collection-service.yaml', 'deploy/kubernetes/split/result-collection-service.yaml'];

let image: string;
let config: img.ImageConfig;
let mounted: img.MountedImage | undefined;
let cluster: MockCluster | undefined;
let secrets: string | undefined;
let booted: img.BootedImage | undefined;
let url: string;
const topics = uniqueTopics('image');

beforeAll(async () => {
  image = process.env.RCS_IMAGE ?? img.buildImage();
  config = img.imageConfig(image);
  if (!img.canRunContainers(image)) mounted = img.mountImage(image);
  cluster = await startTopicsCluster(topics);
  secrets = await mkdtemp(join(tmpdir(), 'image-secrets-'));
  await writeFile(join(secrets, 'clients.json'), JSON.stringify([CLIENT]), { mode: 0o644 });
  // Readable by the image's user, as a secret volume mounted into the pod is.
  await chmod(secrets, 0o755);
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  booted = img.bootImage({
    image,
    config,
    secrets,
    ...(mounted === undefined ? {} : { mounted }),
    env: {
      ...img.manifestShutdown(MANIFESTS).env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      KAFKA_BROKERS: cluster.bootstrapServers.join(','),
      KAFKA_RESULTS_TOPIC: topics.results,
      KAFKA_REQUESTS_TOPIC: topics.requests,
      KAFKA_GROUP_ID: topics.group,
      STATE_STORE: 'redis',
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: PREFIX,
      PUBLIC_URL: url,
      OIDC_SIGNING_KEY: JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'image-key' }),
      OIDC_COOKIE_KEYS: 'a-cookie-key-of-at-least-32-characters-long',
      OIDC_CLIENTS_FILE: '/run/clients.json',
    },
  });
  const run = booted;
  try {
    const exited = run.exited.then((code) => Promise.reject(new Error(`the image exited with ${String(code)}`)));
    await Promise.race([
      eventually(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200, 120_000, 'the image to be ready'),
      exited,
    ]);
  } catch (error) {
    throw new Error(`${(error as Error).message}; it logged:\n${run.output()}`, { cause: error });
  }
}, 1_200_000);

afterAll(async () => {
  if (booted !== undefined && booted.child.exitCode === null) {
    booted.child.kill('SIGKILL');
    await booted.exited;
  }
  mounted?.unmount();
  await cluster?.stop();
  if (secrets !== undefined) await rm(secrets, { recursive: true, force: true });
  await deleteRedisKeys(`${PREFIX}:*`);
}, 60_000);

/** An access token from the service's own issuer (client credentials). */
async function token(): Promise<string> {
  const response = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT.client_id, client_secret: CLIENT.client_secret, scope: CLIENT.scope }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

describe('the built image', () => {
  it('runs as a non-root user, in production, from its own filesystem', () => {
    expect(config.User).not.toMatch(/^(|root|0)(:|$)/);
    expect(config.Env).toContain('NODE_ENV=production');
    if (mounted !== undefined) expect(img.resolveUser(mounted.root, config.User).uid).not.toBe(0);
  });

  it('answers /healthz and /readyz', async () => {
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });

  it('starts a test for an RS256 token of its own issuer, and serves its results by GET and over SSE', async () => {
    const bearer = await token();
    expect(JSON.parse(Buffer.from(bearer.split('.')[0] as string, 'base64url').toString()).alg).toBe('RS256');
    const started = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ query: 'mutation { startTest(input: { name: "image" }) { correlationId } }' }),
    });
    const body = (await started.json()) as { data?: { startTest: { correlationId: string } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    const id = body.data?.startTest.correlationId as string;
    const stream = await openEventStream(url, 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence final } }', { id }, { token: bearer });
    expect(stream.status).toBe(200);
    const producer = await createTestProducer((cluster as MockCluster).bootstrapServers);
    try {
      await producer.send(topics.results, [result(id, { sequence: 1 }), result(id, { sequence: 2, final: true })]);
    } finally {
      await producer.disconnect();
    }
    await stream.waitFor(2, 30_000);
    expect(stream.events.filter((e) => e.event === 'next').map((e) => e.data.data.testMessages)).toEqual([
      { sequence: 1, final: false },
      { sequence: 2, final: true },
    ]);
    stream.close();
    const read = await fetch(`${url}/tests/${id}`, { headers: { authorization: `Bearer ${bearer}` } });
    expect(read.status).toBe(200);
    const test = (await read.json()) as { messageCount: number; messages: Array<{ sequence: number }> };
    expect([test.messageCount, test.messages.map((m) => m.sequence)]).toEqual([2, [1, 2]]);
  });

  it('holds every runtime import among the packages `npm ci --omit=dev` installed', () => {
    if (mounted === undefined) return;
    expect(missingRuntimeImports(join(mounted.root, config.WorkingDir))).toEqual([]);
  });

  it('carries a CycloneDX SBOM (/app/sbom.cdx.json) naming exactly the packages installed in it', async () => {
    if (mounted === undefined) return;
    const app = join(mounted.root, config.WorkingDir);
    const sbom = JSON.parse(await readFile(join(app, 'sbom.cdx.json'), 'utf8')) as {
      bomFormat: string;
      components: Array<{ group?: string; name: string; version: string }>;
    };
    expect(sbom.bomFormat).toBe('CycloneDX');
    const named = new Set(sbom.components.map((c) => `${c.group ? `${c.group}/` : ''}${c.name}@${c.version}`));
    const installed = img.installedPackages(join(app, 'node_modules'));
    expect(installed.size).toBeGreaterThan(200);
    expect(named).toEqual(installed);
  });

  it('weighs no more over its base than the budget docs/operations.md states', async () => {
    const budget = /image budget: (\d+) MB over its base/i.exec(await readFile('docs/operations.md', 'utf8'))?.[1];
    expect(budget).toBeDefined();
    const nodeVersion = (await readFile('.node-version', 'utf8')).trim();
    const over = img.imageSize(image) - img.imageSize(`docker.io/library/node:${nodeVersion}-bookworm-slim`);
    console.info(`image: ${(over / 1e6).toFixed(1)} MB over its base (budget ${budget} MB)`);
    expect(over).toBeGreaterThan(0);
    expect(over).toBeLessThanOrEqual(Number(budget) * 1e6);
  });

  it('drains on SIGTERM and exits 0 within the grace period the manifests give', async () => {
    const run = booted as img.BootedImage;
    const { graceSeconds } = img.manifestShutdown(MANIFESTS);
    const sent = performance.now();
    run.child.kill('SIGTERM');
    const code = await Promise.race([run.exited, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), graceSeconds * 1000).unref())]);
    const seconds = (performance.now() - sent) / 1000;
    console.info(`image: exited ${String(code)} ${seconds.toFixed(1)} s after SIGTERM (grace ${graceSeconds} s)`);
    expect(code).toBe(0);
    expect(run.output()).toMatch(/shut ?down|stopp/i);
  }, 120_000);
});
