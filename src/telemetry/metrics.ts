/**
 * Prometheus metrics (`GET /metrics`): what the consumer did with each record, how far behind it
 * is, how many clients are connected and subscribed, the size of the state, and request latency.
 * Counters are read from the components when scraped, so the hot path does no extra work.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ConsumerState, DelayHistogram, ResultConsumer } from '../ingest/consumer.js';

/** Every state the consumer reports, so the state gauge always has one series per state. */
const CONSUMER_STATES: ReadonlyArray<ConsumerState['state']> = ['idle', 'connecting', 'joined', 'stalled', 'rebalancing', 'crashed', 'stopped'];

/** What the metrics are read from. */
export interface MetricSources {
  /** The results consumer, in a process that consumes (none in an `api` process). */
  readonly consumer?: ResultConsumer;
  /** The GraphQL clients, in a process that serves the API (none in a `consumer` process). */
  readonly clients?: ClientSources;
  /** Tests held in this process's state, when it is held here. */
  readonly storedTests?: () => number;
  /** Whether the state store answers (checked at scrape time). */
  readonly storeUp?: () => Promise<boolean>;
  /** Stored messages skipped on reads because they could not be read, when the store can hold such. */
  readonly unreadableMessages?: () => number;
}

/** What the client gauges are read from. */
export interface ClientSources {
  /** Live subscriptions in this process. */
  readonly subscriptions: () => number;
  /** Live change feed (`testChanges`) subscriptions in this process. */
  readonly changeSubscriptions: () => number;
  /** Open WebSocket connections. */
  readonly connections: () => number;
  /** What the `/graphql` response cache counted, when it is on. */
  readonly responseCache?: () => { readonly hits: number; readonly stored: number; readonly entries: number; readonly bytes: number };
}

/** The registry and the request-timing middleware. */
export interface Metrics {
  readonly registry: Registry;
  /** Times every HTTP request by method, route and status. */
  readonly timeRequests: RequestHandler;
}

/** Creates the metrics of one process. */
export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'rcs_' });
  // Each process exports only the series of the parts it runs: no lag on an API-only process.
  if (sources.consumer !== undefined) registerConsumerMetrics(registry, sources.consumer);
  if (sources.clients !== undefined) registerClientMetrics(registry, sources.clients);
  if (sources.storedTests !== undefined) {
    const storedTests = sources.storedTests;
    new Gauge({
      name: 'rcs_store_tests',
      help: 'Tests held in this process (memory store).',
      registers: [registry],
      collect() {
        this.set(storedTests());
      },
    });
  }
  if (sources.unreadableMessages !== undefined) {
    const unreadable = sources.unreadableMessages;
    new Counter({
      name: 'rcs_stored_messages_unreadable_total',
      help: 'Stored messages skipped on reads because their stored text is not a message (the rest of the test is served).',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(unreadable());
      },
    });
  }
  if (sources.storeUp !== undefined) {
    const storeUp = sources.storeUp;
    new Gauge({
      name: 'rcs_store_up',
      help: '1 when the state store answered its check at scrape time, else 0.',
      registers: [registry],
      async collect() {
        this.set((await storeUp()) ? 1 : 0);
      },
    });
  }
  const duration = new Histogram({
    name: 'rcs_http_request_duration_seconds',
    help: 'HTTP request duration by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

  return {
    registry,
    timeRequests(req: Request, res: Response, next: NextFunction) {
      const end = duration.startTimer();
      res.once('finish', () => {
        // Route patterns, never raw paths: correlation ids must not become label values. A mount
        // (`req.baseUrl`) keeps the request's own casing, as Express matches paths without regard to
        // case: lower-cased, `/DaShBoArD` is the `/dashboard` series, not one more.
        const base = req.baseUrl.toLowerCase();
        const route = req.route?.path !== undefined ? `${base}${String(req.route.path)}` : base || 'unmatched';
        end({ method: req.method, route, status: String(res.statusCode) });
      });
      next();
    },
  };
}

/** What the consumer did with each record, how far behind it is, and whether it is in its group. */
function registerConsumerMetrics(registry: Registry, consumer: ResultConsumer): void {
  const stats = () => consumer.stats;
  registerDelayHistogram(registry, consumer);
  new Counter({
    name: 'rcs_records_total',
    help: 'Result records consumed, by outcome: stored, duplicate (redelivery, not stored again), malformed, dead_lettered (malformed and copied to the dead-letter topic), oversized (malformed: headers or key over their bounds, refused before they were decoded), over_limit.',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const s = stats();
      this.reset();
      this.inc({ outcome: 'stored' }, s.stored);
      this.inc({ outcome: 'duplicate' }, s.duplicates);
      this.inc({ outcome: 'malformed' }, s.malformed);
      this.inc({ outcome: 'dead_lettered' }, s.deadLettered);
      this.inc({ outcome: 'over_limit' }, s.overLimit);
      this.inc({ outcome: 'oversized' }, s.oversized ?? 0);
    },
  });
  new Counter({
    name: 'rcs_records_consumed_total',
    help: 'Result records read from the results topic.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats().consumed);
    },
  });
  new Gauge({
    name: 'rcs_consumer_lag',
    help: 'Records between the last processed offset and the end of the partition, as of the last fetched batch.',
    labelNames: ['topic', 'partition'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { topic, partition, lag } of consumer.lag()) this.set({ topic, partition }, lag);
    },
  });
  new Gauge({
    name: 'rcs_consumer_joined',
    help: '1 while the results consumer is a member of its group with an assignment, else 0.',
    registers: [registry],
    collect() {
      this.set(consumer.state().state === 'joined' ? 1 : 0);
    },
  });
  // Readiness of an API-serving process no longer follows the consumer: these are what operators
  // alert on instead (see deploy/prometheus/alerts.yaml).
  new Gauge({
    name: 'rcs_consumer_state',
    help: "The results consumer's state: 1 for the state it is in, 0 for the others (stalled: in its group, but no answer from the broker for a session timeout).",
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const current = consumer.state().state;
      for (const state of CONSUMER_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });
  new Counter({
    name: 'rcs_consumer_state_changes_total',
    help: 'Times the results consumer entered each state: a rebalance counts once in rebalancing, each rejoin once in joined; stalled counts the consumers replaced after giving no sign of life past their limit.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { entered } = consumer.activity();
      this.reset();
      for (const state of CONSUMER_STATES) this.inc({ state }, entered[state]);
    },
  });
  new Gauge({
    name: 'rcs_consumer_seconds_since_fetch',
    help: 'Seconds since a fetch of the results consumer last succeeded (an empty one counts), or since it was created if none did yet.',
    registers: [registry],
    collect() {
      this.set(consumer.activity().secondsSinceFetch);
    },
  });
}

/** Open GraphQL connections and live subscriptions. */
function registerClientMetrics(registry: Registry, clients: ClientSources): void {
  new Gauge({
    name: 'rcs_subscriptions',
    help: 'Live testMessages subscriptions in this process.',
    registers: [registry],
    collect() {
      this.set(clients.subscriptions());
    },
  });
  new Gauge({
    name: 'rcs_change_subscriptions',
    help: 'Live testChanges subscriptions in this process.',
    registers: [registry],
    collect() {
      this.set(clients.changeSubscriptions());
    },
  });
  new Gauge({
    name: 'rcs_websocket_connections',
    help: 'Open GraphQL WebSocket connections.',
    registers: [registry],
    collect() {
      this.set(clients.connections());
    },
  });
  const cache = clients.responseCache;
  if (cache !== undefined) registerResponseCacheMetrics(registry, cache);
}

/** The `/graphql` response cache: answers sent from it, answers kept, and what it holds. */
function registerResponseCacheMetrics(registry: Registry, cache: NonNullable<ClientSources['responseCache']>): void {
  new Counter({
    name: 'rcs_graphql_response_cache_hits_total',
    help: 'GraphQL answers over HTTP sent from the response cache.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache().hits);
    },
  });
  new Counter({
    name: 'rcs_graphql_response_cache_stored_total',
    help: 'GraphQL answers over HTTP kept by the response cache.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache().stored);
    },
  });
  new Gauge({
    name: 'rcs_graphql_response_cache_entries',
    help: 'Answers the response cache holds.',
    registers: [registry],
    collect() {
      this.set(cache().entries);
    },
  });
  new Gauge({
    name: 'rcs_graphql_response_cache_bytes',
    help: 'Size of the answers the response cache holds (bodies and keys).',
    registers: [registry],
    collect() {
      this.set(cache().bytes);
    },
  });
}

/**
 * `rcs_ingest_delay_seconds{stage}`: the consumer's own bucket counts (ingest-delays.ts), written
 * out as a Prometheus histogram at scrape time, so the ingest path never calls into prom-client.
 */
function registerDelayHistogram(registry: Registry, consumer: ResultConsumer): void {
  const name = 'rcs_ingest_delay_seconds';
  const help =
    'Seconds from a result record\'s timestamp to when the consumer fetched it (stage="fetched") and stored it (stage="stored"); observed for the first record of each stored chunk.';
  const series = (stage: string, h: DelayHistogram) => {
    let cumulative = 0;
    const buckets = h.counts.map((count, i) => {
      cumulative += count;
      return { metricName: `${name}_bucket`, labels: { stage, le: i < h.bounds.length ? String(h.bounds[i]) : '+Inf' }, value: cumulative };
    });
    return [...buckets, { metricName: `${name}_sum`, labels: { stage }, value: h.sum }, { metricName: `${name}_count`, labels: { stage }, value: h.count }];
  };
  // prom-client takes any object with a name and a `get()`; its Histogram cannot be set from counts.
  registry.registerMetric({
    name,
    help,
    type: 'histogram',
    get: () =>
      Promise.resolve({
        name,
        help,
        type: 'histogram',
        aggregator: 'sum',
        values: Object.entries(consumer.delays()).flatMap(([stage, h]) => series(stage, h)),
      }),
  } as unknown as Parameters<Registry['registerMetric']>[0]);
}
