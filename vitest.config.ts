import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

/** The client library's export that points at its TypeScript source (packages/client/package.json): tests run what is in the tree, not a stale build. */
const clientSource = '@result-collection-service/source';
/**
 * The server conditions with the library's added, less `module`: the test processes get these as
 * Node's own `--conditions`, and under `module` Node loads packages' bundler builds, which Node
 * cannot run (@opentelemetry/semantic-conventions 1.28's ESM imports its files without extensions,
 * and @apollo/gateway failed to load in the federation suite).
 */
const conditions = [clientSource, ...defaultServerConditions.filter((condition) => condition !== 'module')];

export default defineConfig({
  resolve: {
    // graphql 16 ships both index.js and index.mjs and has no "exports" map. Node (and so Apollo,
    // graphql-ws and @graphql-tools, which run untransformed) loads index.js; the test transformer
    // would pick index.mjs for our sources. Two copies of graphql refuse each other's schemas, so
    // the tests load the one Node loads in production.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
    conditions,
  },
  ssr: { resolve: { conditions } },
  test: {
    include: ['test/**/*.test.ts'],
    // The tests' own kafkajs clients get the service's clamp of kafkajs's negative timer.
    setupFiles: ['test/support/setup-kafkajs.ts'],
    // Each file starts its own broker and servers on port 0; two at a time suits a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    // Memory checks collect garbage first, so they measure what is held rather than what is garbage.
    execArgv: ['--expose-gc'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
