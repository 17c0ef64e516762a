/**
 * The ceiling for query throughput: graphql-js `graphql()` on `node:http`, over the same schema,
 * resolvers and seeded memory store as the service, with none of the service's HTTP stack, auth
 * or limits; with `--live N --rate R`, N tests more keep receiving R messages a second between
 * them, as in the service. Prints `{ url, ids, live }`, runs until SIGTERM.
 */
import { graphql } from 'graphql';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccessPolicy } from '../../src/auth/access.js';
import { createGraphQLContext } from '../../src/graphql/pipeline/context.js';
import { createSchema } from '../../src/graphql/schema/schema.js';
import type { TestStarter } from '../../src/results/test-starter.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { feedLive, seed, seedLive } from '../lib/seed.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100_000, maxMessagesPerTest: 1_000_000 });
const ids = await seed(log, arg('tests', 20), arg('messages', 100));
const live = await seedLive(log, arg('live', 0), arg('messages', 100));
const stopFeed = feedLive(log, live, arg('rate', 0), arg('messages', 100));
const schema = createSchema();
const starter: TestStarter = { start: () => Promise.reject(new Error('not available here')), maxInputBytes: 65_536 };
const deps = { log, starter, subscriptionQueueLimit: 1000, access: createAccessPolicy({ adminScope: 'tests:admin' }) };
const principal = { subject: 'bench', clientId: null, scopes: new Set(['tests:read', 'tests:admin']), expiresAt: Number.MAX_SAFE_INTEGER, issuer: 'bench' };

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- a failure here is a bug of the worker: the unhandled rejection ends it and the harness reports it
  req.on('end', async () => {
    const { query, variables } = JSON.parse(body) as { query: string; variables?: Record<string, unknown> };
    const result = await graphql({ schema, source: query, variableValues: variables ?? null, contextValue: createGraphQLContext(deps, principal) });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
  });
});
process.once('SIGTERM', () => {
  stopFeed();
  server.closeAllConnections(); // keep-alive connections of the load generator would hold close() open
  server.close(() => process.exit(0));
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ids, live })));
