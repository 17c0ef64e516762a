/**
 * scripts/follow.ts as a user runs it: prints a test's messages until the final one and exits 0,
 * over graphql-ws or SSE (the client library); exits 1 with the reason when the test is unknown or
 * the token is refused (after asking for it again, as the library does).
 */
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { createSimulator, type Simulator } from '../../tools/simulator/simulator.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { mintToken } from '../support/tokens.js';

const topics = uniqueTopics('follow');
let cluster: MockCluster;
let simulator: Simulator;
let svc: TestService;
let token: string;

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  simulator = createSimulator({
    brokers: cluster.bootstrapServers,
    requestsTopic: topics.requests,
    resultsTopic: topics.results,
    groupId: `${topics.group}-sim`,
    intervalMs: 50,
  });
  await simulator.start();
  svc = await startTestService({
    brokers: cluster.bootstrapServers,
    env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group },
  });
  await svc.ready();
  token = await mintToken({ sub: 'follower' }, { expiresInSeconds: 600 });
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await simulator?.dispose();
  await cluster?.stop();
});

function follow(args: string[], tokenValue = token): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/follow.ts', svc.url, ...args],
      { env: { ...process.env, TOKEN: tokenValue }, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
      },
    );
  });
}

describe('scripts/follow.ts', () => {
  it('starts a test, prints each message and exits 0 after the final one', async () => {
    const { code, stdout, stderr } = await follow(['--start']);
    expect(stderr).toMatch(/^started \S+\n[\s\S]*test finished\n$/);
    expect(code).toBe(0);
    const messages = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { final: boolean });
    expect(messages.at(-1)?.final).toBe(true);
  });

  it('follows over SSE too', async () => {
    const { code, stdout, stderr } = await follow(['--start', '--sse']);
    expect(stderr).toMatch(/^started \S+\n[\s\S]*test finished\n$/);
    expect(code).toBe(0);
    const messages = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { final: boolean; cursor: string });
    expect(messages.at(-1)?.final).toBe(true);
    expect(new Set(messages.map((m) => m.cursor)).size).toBe(messages.length);
  });

  it('exits 1 with NOT_FOUND when the test is unknown', async () => {
    const { code, stdout, stderr } = await follow(['no-such-test']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/NOT_FOUND: No test has the correlation id "no-such-test"/);
    expect(stderr).not.toMatch(/test finished/);
  });

  it('exits 1 saying why when the token is refused', async () => {
    const { code, stderr } = await follow(['any-test'], 'not-a-token');
    expect(code).toBe(1);
    expect(stderr).toMatch(/^UNAUTHENTICATED: the token was refused 4 times in a row \(closed 4403 /m);
  });
});
