/**
 * What the correctness scenarios (`bench/correctness.ts`) are built from: the service or the
 * common-stack peer as real processes on the benchmark's broker, a kafkajs producer writing result
 * records, graphql-ws clients that record every sequence pushed, and a TCP relay that stops reading
 * (a subscriber too slow to keep up). Everything goes over real connections.
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../../src/ingest/kafkajs-queue-timer.js';
import '../../src/ingest/kafkajs-stopped-fetch.js';
import { Kafka, Partitioners, logLevel, type Producer } from 'kafkajs';
import { createClient, type Client } from 'graphql-ws';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import type { BenchBroker } from './broker.js';
import { untilConsuming } from './consuming.js';
import { startWorker } from './worker.js';
import { BENCH_AUTH_ENV, benchToken } from './token.js';

/** Which implementation a scenario runs against. */
export type Side = 'service' | 'peer';

/** A server process of one side. */
export interface SideServer {
  readonly url: string;
  /** Records it stored, and records it recognised as already stored, from its `/metrics`. */
  counts(): Promise<{ stored: number; duplicate: number }>;
  /** Its resident memory in bytes, from its `/metrics`. */
  rss(): Promise<number>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  kill(): void;
  stop(): Promise<void>;
}

/** How a server is started: its topic and group, Redis sharing (a key prefix) and extra settings. */
export interface SideOptions {
  readonly topic: string;
  readonly group: string;
  /** Share state through Redis under this prefix (both sides' Redis variants); memory without it. */
  readonly redisPrefix?: string;
  /** False: serves the API only, consumes nothing (the service's SERVICE_ROLE=api). */
  readonly consume?: boolean;
  readonly env?: Record<string, string>;
}

// The mock's group coordinator holds a rebalance for the session timeout less a second, and a dead
// member is noticed after its session timeout: 6 s keeps the scenarios short (as the tests do).
const GROUP_ENV = { KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_FETCH_MAX_WAIT_MS: '10' };

/** Starts a server of `side` and waits until it is ready and its consumer (if any) has joined its group. */
export async function startSide(side: Side, cluster: BenchBroker, o: SideOptions): Promise<SideServer> {
  const common = { ...GROUP_ENV, KAFKA_BROKERS: cluster.bootstrapServers.join(','), KAFKA_RESULTS_TOPIC: o.topic, KAFKA_GROUP_ID: o.group };
  const env =
    side === 'service'
      ? {
          ...BENCH_AUTH_ENV,
          ...common,
          ...(o.redisPrefix === undefined ? {} : { STATE_STORE: 'redis', REDIS_KEY_PREFIX: o.redisPrefix }),
          ...(o.consume === false ? { SERVICE_ROLE: 'api' } : {}),
          ...o.env,
        }
      : {
          ...common,
          PEER_VARIANT: o.redisPrefix === undefined ? 'memory' : 'redis',
          ...(o.redisPrefix === undefined ? {} : { PEER_REDIS_PREFIX: o.redisPrefix }),
          ...(o.consume === false ? { PEER_CONSUME: 'false' } : {}),
          ...o.env,
        };
  const worker = startWorker(side, ['--tests', '0'], env);
  const exited = new Promise<void>((resolve) => (worker.child.exitCode !== null ? resolve() : worker.child.once('exit', () => resolve())));
  const { url } = (await worker.ready) as { url: string };
  // Records produced before the join would wait for it (the mock drops the oldest segments of a large log meanwhile).
  await untilConsuming(url);
  const metric = (text: string, name: RegExp) => Number(name.exec(text)?.[1] ?? 0);
  return {
    url,
    async counts() {
      const text = await (await fetch(`${url}/metrics`)).text();
      return side === 'service'
        ? {
            stored: metric(text, /^rcs_records_total\{outcome="stored"\} (\d+)$/m),
            duplicate: metric(text, /^rcs_records_total\{outcome="duplicate"\} (\d+)$/m),
          }
        : { stored: metric(text, /^peer_records_stored_total (\d+)$/m), duplicate: metric(text, /^peer_records_duplicate_total (\d+)$/m) };
    },
    async rss() {
      const text = await (await fetch(`${url}/metrics`)).text();
      return metric(text, side === 'service' ? /^rcs_process_resident_memory_bytes (\d+)/m : /^process_resident_memory_bytes (\d+)/m);
    },
    exited,
    kill: () => worker.child.kill('SIGKILL'),
    stop: () => worker.stop(),
  };
}

/** POSTs an operation with the benchmark's token and returns `data`. */
export async function graphql<T>(url: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await benchToken()}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: unknown[] };
  if (body.errors !== undefined || body.data === undefined) throw new Error(`${url}: ${JSON.stringify(body.errors)}`);
  return body.data;
}

/** Starts a test through `startTest`, as a client would, and returns its id. */
export async function startTest(url: string): Promise<string> {
  return (await graphql<{ startTest: { correlationId: string } }>(url, 'mutation { startTest(input: { name: "correctness" }) { correlationId } }')).startTest
    .correlationId;
}

/** The sequences a test's stored messages have, from `test.messages`, in the order returned. */
export async function storedSequences(url: string, id: string): Promise<number[]> {
  const data = await graphql<{ test: { messages: { nodes: Array<{ sequence: number }> } } | null }>(
    url,
    'query($id: ID!) { test(correlationId: $id) { messages(first: 1000) { nodes { sequence } } } }',
    { id },
  );
  return data.test?.messages.nodes.map((n) => n.sequence) ?? [];
}

/** A result-record producer (the external system), with the broker's producer. */
export interface RecordProducer {
  /** Produces records of `sequences` for test `id` in one request, the last one final when `final`. */
  send(topic: string, id: string, sequences: readonly number[], options?: { final?: boolean; payloadBytes?: number }): Promise<void>;
  disconnect(): Promise<void>;
}

/** Connects a producer to the broker. */
export async function createRecordProducer(cluster: BenchBroker): Promise<RecordProducer> {
  const producer: Producer = new Kafka({ clientId: 'bench-correctness', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING }).producer({
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  return {
    async send(topic, id, sequences, options = {}) {
      const note = 'x'.repeat(options.payloadBytes ?? 20);
      const last = sequences.at(-1);
      const messages = sequences.map((sequence) => ({
        key: id,
        value: JSON.stringify({
          correlationId: id,
          sequence,
          status: options.final === true && sequence === last ? 'completed' : 'running',
          final: options.final === true && sequence === last,
          payload: { sequence, note },
        }),
      }));
      await producer.send({ topic, acks: -1, messages });
    },
    disconnect: () => producer.disconnect(),
  };
}

/** A subscription to `testMessages` that records every sequence pushed, and the cursors where the side has them. */
export interface Follower {
  readonly sequences: number[];
  /** The `cursor` of the last message pushed (the service's messages have one; the peer's do not). */
  lastCursor(): string | undefined;
  /** How the connection ended, if it did: close code and reason, or the subscription's error. */
  ended(): string | undefined;
  dispose(): Promise<void>;
}

/**
 * Subscribes to `testMessages` of `id` on `url` (through `via`, a relay's URL, when given). `after`
 * resumes after a cursor (the service's argument; the peer's schema has none).
 */
export async function follow(side: Side, url: string, id: string, options: { after?: string; via?: string } = {}): Promise<Follower> {
  const sequences: number[] = [];
  let cursor: string | undefined;
  let ended: string | undefined;
  const token = await benchToken();
  const base = options.via ?? url;
  const client: Client = createClient({
    url: `${base.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: false,
    on: { closed: (event) => (ended ??= `closed ${(event as { code?: number }).code ?? ''} ${(event as { reason?: string }).reason ?? ''}`.trim()) },
  });
  const fields = side === 'service' ? 'sequence cursor' : 'sequence';
  const args = options.after === undefined ? '$id: ID!' : '$id: ID!, $after: String';
  const pass = options.after === undefined ? 'correlationId: $id' : 'correlationId: $id, after: $after';
  const acknowledged = new Promise<void>((resolve, reject) =>
    client.subscribe({ query: '{ __typename }' }, { next: () => undefined, error: reject, complete: resolve }),
  );
  client.subscribe<{ testMessages: { sequence: number; cursor?: string } }>(
    {
      query: `subscription(${args}) { testMessages(${pass}) { ${fields} } }`,
      variables: { id, ...(options.after === undefined ? {} : { after: options.after }) },
    },
    {
      next: (result) => {
        const message = result.data?.testMessages;
        if (message === undefined) return;
        sequences.push(message.sequence);
        cursor = message.cursor;
      },
      error: (error) => (ended ??= `error ${error instanceof Error ? error.message : JSON.stringify(error)}`),
      complete: () => undefined,
    },
  );
  // The subscription is live once the server answered an operation sent after it on the same socket.
  await acknowledged;
  return { sequences, lastCursor: () => cursor, ended: () => ended, dispose: () => client.dispose() as Promise<void> };
}

/** A TCP relay to a server that can stop reading from it, as a client on a slow link stops draining its socket. */
export interface StallingRelay {
  readonly url: string;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

/** Starts a relay to `url` (http://host:port). */
export async function startRelay(url: string): Promise<StallingRelay> {
  const target = new URL(url);
  const pairs = new Map<Socket, Socket>(); // upstream (to the server) → downstream (to the client)
  let stalled = false;
  const server: Server = createServer((downstream) => {
    const upstream = connect(Number(target.port), target.hostname);
    pairs.set(upstream, downstream);
    downstream.pipe(upstream);
    if (!stalled) upstream.pipe(downstream);
    const close = () => {
      pairs.delete(upstream);
      upstream.destroy();
      downstream.destroy();
    };
    upstream.on('error', close).on('close', close);
    downstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stall() {
      stalled = true;
      // Unpiped, or pipe()'s drain handler would resume the paused socket.
      for (const [up, down] of pairs) {
        up.unpipe(down);
        up.pause();
      }
    },
    resume() {
      stalled = false;
      for (const [up, down] of pairs) up.pipe(down);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const up of pairs.keys()) up.destroy();
        server.close(() => resolve());
      }),
  };
}
