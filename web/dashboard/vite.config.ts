/**
 * Builds the dashboard into static files the service serves itself (dist/web/dashboard/, under
 * /dashboard/): every script and style comes from the service's own origin, under its CSP.
 * `npm run build:web`; scripts/setup.sh runs it.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  logLevel: 'error',
  build: {
    outDir: fileURLToPath(new URL('../../dist/web/dashboard/', import.meta.url)),
    emptyOutDir: true,
    // Nothing inlined as data: URLs; the page runs under the service's strict CSP.
    assetsInlineLimit: 0,
  },
});
