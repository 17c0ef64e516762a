/**
 * The files a query and a record pass through, counted from the running code rather than read from
 * it: `npx tsx bench/request-path.ts` (ARCHITECTURE.md, "Each hop, once", quotes its counts).
 *
 * The service runs in this process without a broker (the pipeline's harness: results reach it
 * through the consumer's handler), with the default configuration. Two paths are measured, each
 * after a warm-up of the same work on other tests:
 *
 * - **query**: a first `test(correlationId:)` query of a test with one message, over HTTP (so the
 *   response cache misses);
 * - **record**: a result handed to the consumer's handler, to the `next` frame a graphql-ws
 *   subscriber of `testMessages { sequence status payload }` receives.
 *
 * **Files** are counted exactly, by V8's precise coverage: the files under `src/` in which some
 * function ran during the path, in each of three windows (what all three share: a timer of the
 * service firing in one window does not count). **Calls between files** are the distinct pairs
 * (caller's file, callee's file) seen on the stacks of a CPU profile sampled every 10 µs over a
 * thousand repetitions: a call too short to be sampled is missed, so it is a lower bound, and a
 * call made through a library (graphql-js calling a resolver) counts as one from the nearest file
 * of ours below it.
 */
import { Session } from 'node:inspector/promises';
import { createMemoryResultLog } from '../src/log/memory-result-log.js';
import { incoming } from '../test/log/storage-contract.js';
import { eventually, postGraphQL } from '../test/support/graphql.js';
import { openRawSocket } from '../test/support/raw-socket.js';
import { startPipelineService } from '../test/support/service.js';
import { defaultToken } from '../test/support/tokens.js';

const ROOT = new URL('../src/', import.meta.url).href;
const QUERY = 'query($id: ID!) { test(correlationId: $id) { correlationId status messages { nodes { sequence status payload } } } }';
const FOLLOW = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence status payload } }';

const store = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100_000, maxMessagesPerTest: 100_000 });
const svc = await startPipelineService({ log: store });
const session = new Session();
session.connect();
await session.post('Profiler.enable');
const token = await defaultToken();
let made = 0;

/** A test with one message, never queried before. */
async function freshTest(): Promise<string> {
  const id = `path-${made++}-${Date.now()}`;
  await store.create({ correlationId: id, input: null, owner: 'tester' });
  await svc.memoryBroker.deliver([incoming(id, { sequence: 1, status: 'RUNNING', payload: { n: 1 } })]);
  return id;
}

async function query(id: string): Promise<void> {
  const { body } = await postGraphQL<{ test?: { messages?: { nodes?: unknown[] } } }>(svc.url, QUERY, { id }, { token });
  if (body.data?.test?.messages?.nodes?.length !== 1) throw new Error(`the query answered ${JSON.stringify(body)}`);
}

/** One subscriber over graphql-ws of a fresh test; `push()` records a result and waits for its frame. */
async function follower(): Promise<{ push(): Promise<void>; close(): void }> {
  const id = `follow-${made++}-${Date.now()}`;
  await store.create({ correlationId: id, input: null, owner: 'tester' });
  const { ws } = await openRawSocket(svc.url, token);
  let nexts = 0;
  ws.on('message', (data: Buffer) => {
    if (data.toString().includes('"type":"next"')) nexts++;
  });
  ws.send(JSON.stringify({ id: 's', type: 'subscribe', payload: { query: FOLLOW, variables: { id } } }));
  await eventually(() => store.followers(id) === 1, 5000, 'the follower');
  let sequence = 0;
  return {
    async push() {
      const before = nexts;
      sequence++;
      await svc.memoryBroker.deliver([incoming(id, { sequence, status: 'RUNNING', payload: { n: sequence } })]);
      await eventually(() => nexts > before, 5000, 'the push');
    },
    close: () => ws.close(),
  };
}

interface Coverage {
  result: Array<{ url: string; functions: Array<{ ranges: Array<{ count: number }> }> }>;
}

/** The files under src/ in which a function ran during `work`, in each of three windows. */
async function filesRun(work: () => Promise<void>): Promise<string[]> {
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const windows: Array<Set<string>> = [];
  for (let i = 0; i < 3; i++) {
    await session.post('Profiler.takePreciseCoverage'); // resets the counts
    await work();
    const { result } = (await session.post('Profiler.takePreciseCoverage')) as Coverage;
    windows.push(
      new Set(result.filter((s) => s.url.startsWith(ROOT) && s.functions.some((f) => (f.ranges[0]?.count ?? 0) > 0)).map((s) => s.url.slice(ROOT.length))),
    );
  }
  await session.post('Profiler.stopPreciseCoverage');
  const [first, ...rest] = windows as [Set<string>, ...Array<Set<string>>];
  return [...first].filter((file) => rest.every((w) => w.has(file))).sort();
}

interface ProfileNode {
  id: number;
  callFrame: { url: string };
  children?: number[];
}

/** Distinct (caller's file, callee's file) pairs under src/ on the sampled stacks of `times` runs of `work`. */
async function callsBetweenFiles(work: () => Promise<void>, times: number): Promise<string[]> {
  await session.post('Profiler.setSamplingInterval', { interval: 10 });
  await session.post('Profiler.start');
  for (let i = 0; i < times; i++) await work();
  const { profile } = (await session.post('Profiler.stop')) as { profile: { nodes: ProfileNode[] } };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const edges = new Set<string>();
  const visit = (node: ProfileNode, below: string | undefined): void => {
    const url = node.callFrame.url;
    const file = url.startsWith(ROOT) ? url.slice(ROOT.length) : undefined;
    if (file !== undefined && below !== undefined && below !== file) edges.add(`${below} → ${file}`);
    for (const child of node.children ?? []) visit(byId.get(child) as ProfileNode, file ?? below);
  };
  visit(profile.nodes[0] as ProfileNode, undefined);
  return [...edges].sort();
}

function report(name: string, files: string[], calls: string[]): void {
  console.log(`\n${name}: ${files.length} files, ${calls.length} calls between files`);
  for (const file of files) console.log(`  ${file}`);
  console.log('  calls:');
  for (const call of calls) console.log(`    ${call}`);
}

try {
  for (let i = 0; i < 200; i++) await query(await freshTest());
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await freshTest());
  // The tests are made before the windows: only the query's own work is counted.
  const queryFiles = await filesRun(() => query(ids.pop() as string));
  for (let i = 0; i < 1000; i++) ids.push(await freshTest());
  const queryCalls = await callsBetweenFiles(async () => query(ids.pop() as string), 1000);
  report('query', queryFiles, queryCalls);

  const sub = await follower();
  for (let i = 0; i < 200; i++) await sub.push();
  const recordFiles = await filesRun(() => sub.push());
  const recordCalls = await callsBetweenFiles(() => sub.push(), 1000);
  sub.close();
  report('record', recordFiles, recordCalls);
} finally {
  session.disconnect();
  await svc.stop();
  await store.dispose();
}
