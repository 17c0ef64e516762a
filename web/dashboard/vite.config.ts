/**
 * Builds the dashboard into static files the service serves itself (dist/web/dashboard/, under
 * /dashboard/): every script and style comes from the service's own origin, under its CSP.
 * `npm run build:web`; scripts/setup.sh runs it.
 */
import { fileURLToPath } from 'node:url';
import { defaultClientConditions, defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  // The client library (an npm workspace) from its source, as the type check and the tests take it:
  // the dashboard never ships a stale build of it (packages/client/package.json's export condition).
  resolve: { conditions: ['@result-collection-service/source', ...defaultClientConditions] },
  logLevel: 'error',
  build: {
    outDir: fileURLToPath(new URL('../../dist/web/dashboard/', import.meta.url)),
    emptyOutDir: true,
    // Nothing inlined as data: URLs; the page runs under the service's strict CSP.
    assetsInlineLimit: 0,
  },
});
