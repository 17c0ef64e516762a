/**
 * The users of a chaos run, all through the load balancer: tests started at a steady rate
 * (`POST /tests`, retry-safe: each start names its correlation id in `Idempotency-Key` and is
 * tried again with it until it is answered, so an answer lost in a fault leaves no stray test
 * behind), each followed by the client library (graphql-ws and SSE in turn, from its
 * first message to its final one, through every reconnect), and readers of `test()`, `tests()` and
 * `GET /tests/{id}`. Beside them, each replica's memory is sampled from its own `/metrics`. Rates
 * are bounded and every loop stops when told.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { follow, type Following } from '../packages/client/src/index.js';
import { mintToken } from '../test/support/tokens.js';
import type { FollowerRecord, History } from './history.js';
import type { Stack } from './stack.js';

const START_EVERY_MS = 1_000;
const READ_EVERY_MS = 250;
const MEMORY_EVERY_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** A start not answered is tried again this often, for this long, then given up. */
const START_RETRY_EVERY_MS = 2_000;
const START_RETRY_FOR_MS = 120_000;

/** The running workload. */
export interface Workload {
  /** Stops starting tests and reading; followers go on until their tests complete. Waits at most `withinMs` for starts being retried. */
  stopLoad(withinMs: number): Promise<void>;
  /** Resolves once every follower has ended (or `timeoutMs` passed). */
  followersDone(timeoutMs: number): Promise<void>;
  /** The tests whose followers have not ended yet. */
  unfinished(): string[];
  stop(): Promise<void>;
}

const token = () => mintToken({ sub: 'chaos' }, { expiresInSeconds: 600 });

/** A loop that runs `step` every `everyMs` until stopped; resolves its `done` when it has. */
function every(everyMs: number, step: () => Promise<void>) {
  let running = true;
  const done = (async () => {
    while (running) {
      const began = Date.now();
      await step().catch(() => undefined);
      await sleep(Math.max(0, everyMs - (Date.now() - began)));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Starts the users. */
export function startWorkload(stack: Stack, history: History): Workload {
  const url = stack.lb.url;
  const following = new Map<string, Following>();
  let started = 0;
  const fetchWithin = (input: string, init: RequestInit = {}) => fetch(input, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });

  /** One try of a start under `correlationId`: the answer's status, 0 for none. */
  const tryStart = async (correlationId: string): Promise<number> => {
    try {
      const response = await fetchWithin(`${url}/tests`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await token()}`, 'idempotency-key': correlationId },
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  };
  const accepted = (correlationId: string) => {
    history.started.set(correlationId, Date.now());
    followTest(correlationId, started % 2 === 0 ? 'ws' : 'sse');
    started += 1;
  };
  /** What a user does with a start that was not answered: the same start again, until it is (or a refusal says not to). */
  const retryStart = async (correlationId: string) => {
    const deadline = Date.now() + START_RETRY_FOR_MS;
    while (Date.now() < deadline) {
      await sleep(START_RETRY_EVERY_MS);
      const status = await tryStart(correlationId);
      if (status === 202) return accepted(correlationId);
      history.startFailures.push({ at: Date.now(), status });
      if (status >= 400 && status < 500 && status !== 429) break;
    }
    history.abandoned.add(correlationId);
  };
  const retries = new Set<Promise<void>>();

  const startOne = async () => {
    const correlationId = randomUUID();
    const status = await tryStart(correlationId);
    if (status === 202) return accepted(correlationId);
    history.startFailures.push({ at: Date.now(), status });
    const retry = retryStart(correlationId);
    retries.add(retry);
    void retry.finally(() => retries.delete(retry));
  };

  const followTest = (correlationId: string, transport: 'ws' | 'sse') => {
    const record: FollowerRecord = { transport, sequences: [], ids: [], reconnects: 0, end: undefined };
    history.followers.set(correlationId, record);
    const handle = follow(correlationId, {
      url,
      transport,
      getToken: token,
      // Above the service's SSE keep-alive (every 12 s): 10 s took every follower of a test with no
      // result yet for dead every 10 s over SSE, and an hour whose requests stopped being read
      // (2,026 tests waiting) spent itself on reconnects.
      deadAfterMs: 20_000,
      maxRetryWaitMs: 2_000,
      onMessage: (message) => {
        record.sequences.push(message.sequence ?? -1);
        record.ids.push(message.id);
        if (message.producedAt) history.pushLatency.push({ at: Date.now(), ms: Date.now() - Date.parse(message.producedAt) });
      },
      onState: (state) => {
        if (state.status === 'reconnecting') record.reconnects += 1;
      },
    });
    following.set(correlationId, handle);
    void handle.done.then((end) => (record.end = end));
  };

  const readOne = async () => {
    const ids = [...history.started.keys()];
    if (ids.length === 0) return;
    const id = ids[Math.floor(Math.random() * ids.length)] as string;
    const kind = ['test()', 'tests()', 'GET /tests/{id}'][history.reads.length % 3] as string;
    const headers = { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' };
    let status: number;
    try {
      const response =
        kind === 'GET /tests/{id}'
          ? await fetchWithin(`${url}/tests/${encodeURIComponent(id)}`, { headers })
          : await fetchWithin(`${url}/graphql`, {
              method: 'POST',
              headers,
              body: JSON.stringify(
                kind === 'test()'
                  ? { query: 'query Chaos($id: ID!) { test(correlationId: $id) { status messageCount } }', variables: { id } }
                  : { query: 'query ChaosMany($ids: [ID!]!) { tests(correlationIds: $ids) { status } }', variables: { ids: [id, ids[0]] } },
              ),
            });
      status = response.status;
      await response.arrayBuffer();
    } catch {
      status = 0;
    }
    history.reads.push({ at: Date.now(), kind, status });
  };

  const sampleMemory = async () => {
    for (const replica of stack.replicas) {
      if (replica.process === undefined) continue;
      try {
        const text = await (await fetchWithin(`${replica.process.url}/metrics`)).text();
        const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
        history.memory.push({
          at: Date.now(),
          replica: replica.name,
          pid: replica.process.child.pid ?? 0,
          rss: value('rcs_process_resident_memory_bytes'),
          heap: value('rcs_nodejs_heap_size_used_bytes'),
        });
      } catch {
        // Down or frozen: no sample.
      }
    }
  };

  const loops = [every(START_EVERY_MS, startOne), every(READ_EVERY_MS, readOne), every(MEMORY_EVERY_MS, sampleMemory)];
  return {
    stopLoad: async (withinMs) => {
      await Promise.all(loops.slice(0, 2).map((loop) => loop.stop()));
      await Promise.race([Promise.all([...retries]), sleep(withinMs)]);
    },
    followersDone: async (timeoutMs) => {
      await Promise.race([Promise.all([...following.values()].map((f) => f.done)), sleep(timeoutMs)]);
    },
    unfinished: () => [...history.followers].filter(([, record]) => record.end === undefined).map(([id]) => id),
    stop: async () => {
      await Promise.all(loops.map((loop) => loop.stop()));
      await Promise.all([...following.values()].map((f) => f.stop()));
    },
  };
}
