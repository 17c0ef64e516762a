/**
 * Composition, start and stop of one service process. The role decides which parts run: the API
 * (HTTP, WebSocket and SSE on one port, the issuer, the request publisher), the consumer in the
 * background, or both; health, readiness and metrics are always served. Every long-lived part is
 * registered in the process's stop phases with its phase (see src/process/stop-phases.ts):
 * HTTP, WebSockets and event streams drain first, then the consumer commits and the producers flush, then the result
 * log and issuer let go, and the connections close last.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMetrics } from '../telemetry/metrics.js';
import { createHttpApp, type Readiness } from '../http/app.js';
import type { ConsumerState } from '../ingest/consumer.js';
import type { BrokerSide } from '../ingest/broker-side.js';
import { disposeOnce } from '../process/disposable.js';
import { createEventLoopWatch } from '../process/event-loop-watch.js';
import type { Health } from '../http/app.js';
import { createStopPhases } from '../process/stop-phases.js';
import { createApiSide } from './api-side.js';
import type { ServiceOptions } from './service-options.js';

export type { ServiceOptions } from './service-options.js';
import { closeHttpServer, drainGraceMs } from './http-close.js';
import { createResultRecorder } from '../results/record-result.js';
import { createStartRecorder } from '../results/record-start.js';

/** A running service. */
export interface Service {
  /** `http://host:port` the service listens on (the real port when configured with 0). */
  readonly url: string;
  readonly port: number;
  readonly httpServer: Server;
  readonly broker: BrokerSide;
  readiness(): Promise<Readiness>;
  /** Graceful shutdown, phase by phase; safe to call twice (the second call waits for the first). */
  stop(): Promise<void>;
}

/**
 * Starts the service. Resolves once HTTP listens; the consumer (unless the role is `api`) joins
 * its group in the background.
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  const { config, logger, log } = options;
  const stopPhases = options.stopPhases ?? createStopPhases({ logger });
  const consumes = config.role !== 'api';
  const broker = options.createBrokerSide({
    onEvents: createResultRecorder({ log }),
    onRequests: createStartRecorder({ log, maxInputBytes: config.resultLog.maxInputBytes, jsonShape: config.resultLog.jsonShape, logger }),
  });
  const httpServer = createServer();
  const api = config.role === 'consumer' ? undefined : await createApiSide(options, broker, httpServer);

  stopPhases.register('drain', 'http', { dispose: api ? () => api.stop() : () => closeHttpServer(httpServer, drainGraceMs(config)) });
  // The consumer commits what it stored as it leaves the group.
  stopPhases.register('ingest', 'broker', broker);
  stopPhases.register('state', 'result log', log);
  if (options.auth) stopPhases.register('state', 'auth', options.auth);

  let stopping = false;
  const storeCheck = () =>
    log.check().then(
      () => 'ok',
      // The cause, when the error wraps one (a ServiceError does): what an operator acts on.
      (error: unknown) => `unavailable: ${describe(error)}`,
    );
  const readiness = async (): Promise<Readiness> => {
    if (stopping) return { ready: false, checks: { service: 'shutting down' } };
    const checks: Record<string, string> = {};
    if (consumes) {
      checks.consumer = consumerCheck(broker.consumer.state());
      // Replicated mode: until it reads the requests topic, the replica knows no owner of a test started elsewhere.
      if (broker.requests) checks.requests = consumerCheck(broker.requests.state());
    }
    checks.store = await storeCheck();
    if (!api) return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
    // A process that serves the API is ready when it can answer requests: reads never touch the
    // broker, so a rebalance or a broker outage must not take it (and every other replica, at the
    // same moment) out of rotation. The consumer's state stays in the body and in the metrics,
    // for operators to alert on. The embedded issuer is built before the listener opens and keeps
    // its grants in the store checked above.
    // Replicated mode: the store is this process's memory, rebuilt by reading both topics; until
    // both consumers have joined once, it knows no test started elsewhere.
    const rebuilt = broker.requests === undefined || (broker.consumer.activity().joinedOnce && broker.requests.activity().joinedOnce);
    if (!rebuilt) checks.replay = 'waiting for both consumers to join once and rebuild the state';
    return { ready: checks.store === 'ok' && rebuilt, checks };
  };

  // Liveness: only what the process cannot recover from by itself. A broker or store outage is
  // waited out (and reported by readiness and the metrics), never a reason for a restart.
  const eventLoop = createEventLoopWatch({ maxDelayMs: config.healthMaxEventLoopDelayMs });
  stopPhases.register('connections', 'event loop watch', eventLoop);
  const health = (): Health => {
    const loop = eventLoop.check();
    const checks: Record<string, string> = { eventLoop: loop.detail };
    let healthy = loop.ok;
    if (consumes) {
      // Either consumer, the requests one of the replicated mode too: no replacement will come.
      const consumers = { consumer: broker.consumer, ...(broker.requests ? { requests: broker.requests } : {}) };
      for (const [name, consumer] of Object.entries(consumers)) {
        const gaveUp = consumer.activity().gaveUp;
        checks[name] = gaveUp === undefined ? 'ok' : `gave up: ${gaveUp}`;
        healthy &&= gaveUp === undefined;
      }
    }
    return { healthy, checks };
  };

  const metrics = createMetrics({
    ...(consumes ? { consumer: broker.consumer } : {}),
    ...(broker.requests ? { requests: broker.requests } : {}),
    ...(api ? { clients: api.clients } : {}),
    ...(options.storedTests ? { storedTests: options.storedTests } : {}),
    storeUp: () => storeCheck().then((check) => check === 'ok'),
    ...(log.unreadableMessages ? { unreadableMessages: () => log.unreadableMessages?.() ?? 0 } : {}),
  });
  httpServer.on('request', createHttpApp({ metrics, readiness, health, logger, trustProxy: config.trustProxy, ...(api ? { api: api.routes } : {}) }));

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.port, config.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const port = (httpServer.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;

  if (api) broker.publisher.start();
  if (consumes) {
    broker.consumer.start();
    broker.requests?.start();
  }
  logger.info({ port, role: config.role, topic: config.kafka.resultsTopic, groupId: config.kafka.groupId }, 'service listening');

  const stop = disposeOnce(async () => {
    stopping = true;
    logger.info({ delayMs: config.shutdownDelayMs }, 'shutting down');
    // Readiness already answers 503. Load balancers notice on their next probe; until then they
    // still send requests here, which are served rather than refused.
    if (config.shutdownDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
    await stopPhases.stop();
    logger.info('stopped');
  });

  return { url: `http://${host}:${port}`, port, httpServer, broker, readiness, stop };
}

/** An error's message, and its cause's when it wraps one (never a secret: Redis and broker errors name no credential). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause === undefined || cause === error.message ? error.message : `${error.message} (${cause})`;
}

/** GraphQL over HTTP, WebSocket and SSE (one pipeline), the REST routes and the issuer. */
/** A consumer's readiness check: `ok` when joined, else its state and why. */
function consumerCheck(consumer: ConsumerState): string {
  return consumer.state === 'joined' ? 'ok' : `${consumer.state}${consumer.reason ? `: ${consumer.reason}` : ''}`;
}
