/**
 * Builds GraphiQL into static files the service serves itself (dist/web/graphiql/, under
 * /graphiql/): every script, style, font and Monaco worker comes from the service's own origin,
 * so the page works offline and behind a firewall. `npm run build:web`; scripts/setup.sh runs it.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/graphiql/',
  // Errors only: the bundled packages' "use client" directives warn by the dozen and mean nothing here.
  logLevel: 'error',
  build: {
    outDir: fileURLToPath(new URL('../../dist/web/graphiql/', import.meta.url)),
    emptyOutDir: true,
    // Monaco is large; the page is a development tool loaded once, so one warning threshold fits it.
    chunkSizeWarningLimit: 8192,
    // Nothing inlined as data: URLs beyond what the packages do themselves; a strict CSP stays possible.
    assetsInlineLimit: 0,
  },
  worker: { format: 'es' },
});
