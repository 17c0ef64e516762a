/**
 * The peer server, assembled as Apollo Server's "subscriptions" page shows it: Express with
 * `expressMiddleware` on `/graphql`, a `ws` WebSocketServer on the same HTTP server handed to
 * graphql-ws's `useServer`, and the drain plugins; a `PubSub` (memory) or `RedisPubSub` (Redis),
 * a kafkajs consumer feeding the store, bearer tokens checked in the context function, and
 * graphql-depth-limit on both transports.
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../../../src/ingest/kafkajs-queue-timer.js';
import '../../../src/ingest/kafkajs-stopped-fetch.js';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import cors from 'cors';
import express from 'express';
import { GraphQLError, specifiedRules, validate, type ValidationRule } from 'graphql';
import depthLimit from 'graphql-depth-limit';
import { RedisPubSub } from 'graphql-redis-subscriptions';
import { PubSub, type PubSubEngine } from 'graphql-subscriptions';
import { useServer } from 'graphql-ws/use/ws';
import { Redis } from 'ioredis';
import { jwtVerify } from 'jose';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { startPeerConsumer } from './consumer.js';
import { createRedisStore } from './redis-store.js';
import { RESULT_STORED, createPeerContext, createPeerSchema, type PeerContext } from './schema.js';
import { createMemoryStore, type PeerStore } from './store.js';

/** How the peer is started. */
export interface PeerOptions {
  readonly brokers: string[];
  readonly resultsTopic: string;
  readonly requestsTopic: string;
  readonly groupId: string;
  /** `memory`: a Map and graphql-subscriptions' PubSub; `redis`: Redis hashes and lists and RedisPubSub. */
  readonly variant: 'memory' | 'redis';
  readonly redisUrl?: string;
  readonly redisPrefix?: string;
  readonly auth: { readonly issuer: string; readonly audience: string; readonly hs256Secret: string };
  readonly maxDepth?: number;
  readonly fetchMaxWaitMs?: number;
  readonly sessionTimeoutMs?: number;
  readonly fromBeginning?: boolean;
  /** False: a replica that serves the API only (the Redis variant: another replica consumes). */
  readonly consume?: boolean;
  readonly port?: number;
  readonly onRecord?: (stored: boolean) => void;
}

/** A running peer. */
export interface RunningPeer {
  readonly url: string;
  /** The Express app, for routes a host adds (the benchmarks' `/metrics`). */
  readonly app: express.Express;
  readonly store: PeerStore;
  stop(): Promise<void>;
}

/** Starts the peer and resolves once it listens. */
export async function startPeer(options: PeerOptions): Promise<RunningPeer> {
  const kafka = new Kafka({ clientId: 'common-stack-peer', brokers: options.brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const redisUrl = options.redisUrl ?? 'redis://127.0.0.1:6379';
  const redis = options.variant === 'redis' ? new Redis(redisUrl) : undefined;
  // RedisPubSub opens its publisher and subscriber connections itself (with the ioredis it depends
  // on), as a common stack wires it: a subscribed connection takes no other commands.
  const pubsub: PubSubEngine = redis ? new RedisPubSub({ connection: redisUrl }) : new PubSub();
  const store = redis ? createRedisStore(redis, options.redisPrefix ?? 'peer') : createMemoryStore();
  // Redis channels are shared by everything on that Redis: the key prefix keeps peers apart.
  const trigger = redis ? `${options.redisPrefix ?? 'peer'}:${RESULT_STORED}` : RESULT_STORED;
  const schema = createPeerSchema({
    store,
    pubsub,
    trigger,
    requestTest: async (correlationId, input) => {
      await producer.send({ topic: options.requestsTopic, messages: [{ key: correlationId, value: JSON.stringify({ correlationId, input }) }] });
    },
  });
  const secret = new TextEncoder().encode(options.auth.hs256Secret);
  const subjectOf = async (authorization: unknown): Promise<string> => {
    const token = typeof authorization === 'string' && authorization.startsWith('Bearer ') ? authorization.slice(7) : undefined;
    if (token === undefined) throw new GraphQLError('not authenticated', { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
    try {
      const { payload } = await jwtVerify(token, secret, { issuer: options.auth.issuer, audience: options.auth.audience });
      return payload.sub ?? '';
    } catch {
      throw new GraphQLError('invalid token', { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
    }
  };
  const rules: ValidationRule[] = [depthLimit(options.maxDepth ?? 10)];

  const app = express();
  const httpServer = createServer(app);
  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql' });
  const serverCleanup = useServer<Record<string, unknown>>(
    {
      schema,
      // graphql-ws validates with the specified rules only; the depth limit is added as on HTTP.
      validate: (s, document) => validate(s, document, [...specifiedRules, ...rules]),
      context: async (ctx): Promise<PeerContext> => createPeerContext(store, await subjectOf(ctx.connectionParams?.authorization)),
    },
    wsServer,
  );
  const apollo = new ApolloServer<PeerContext>({
    schema,
    validationRules: rules,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      { serverWillStart: async () => ({ drainServer: async () => void (await serverCleanup.dispose()) }) },
    ],
  });
  await apollo.start();
  let joined = options.consume === false;
  app.get('/readyz', (_req, res) => void res.status(joined ? 200 : 503).end());
  app.use(
    '/graphql',
    cors(),
    express.json({ limit: '1mb' }),
    expressMiddleware(apollo, { context: async ({ req }) => createPeerContext(store, await subjectOf(req.headers.authorization)) }),
  );

  await producer.connect();
  const consumer =
    options.consume === false
      ? undefined
      : await startPeerConsumer({
          kafka,
          groupId: options.groupId,
          topic: options.resultsTopic,
          store,
          pubsub,
          trigger,
          ...(options.fromBeginning === undefined ? {} : { fromBeginning: options.fromBeginning }),
          ...(options.fetchMaxWaitMs === undefined ? {} : { fetchMaxWaitMs: options.fetchMaxWaitMs }),
          ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
          ...(options.onRecord === undefined ? {} : { onRecord: options.onRecord }),
          onGroupJoin: () => (joined = true),
        });
  await new Promise<void>((resolve) => httpServer.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    app,
    store,
    async stop() {
      for (const ws of wsServer.clients) ws.terminate();
      await consumer?.disconnect();
      await apollo.stop();
      await producer.disconnect();
      if (pubsub instanceof RedisPubSub) await pubsub.close();
      await store.close();
      redis?.disconnect();
    },
  };
}
