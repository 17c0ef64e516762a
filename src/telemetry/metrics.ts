/**
 * Prometheus metrics (`GET /metrics`): the consumers' series (consumer-metrics.ts), how many
 * clients are connected and subscribed, the size of the state, and request latency. Counters are
 * read from the components when scraped, so the hot path does no extra work.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ResultConsumer } from '../ingest/consumer.js';
import type { RequestConsumer } from '../ingest/request-consumer.js';
import { registerConsumerMetrics, registerRequestConsumerMetrics } from './consumer-metrics.js';

/** What the metrics are read from. */
export interface MetricSources {
  /** The results consumer, in a process that consumes (none in an `api` process). */
  readonly consumer?: ResultConsumer;
  /** The replicated mode's requests consumer (none in the other modes). */
  readonly requests?: RequestConsumer;
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
  if (sources.requests !== undefined) registerRequestConsumerMetrics(registry, sources.requests);
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
