/**
 * The client library in Chromium, as a page on its own origin uses it (bundled by its package name
 * from packages/client/src with esbuild, as an application's bundler would): it follows a test with the
 * IndexedDB cursor store over the browser's own WebSocket and fetch, the page is reloaded in the
 * middle, and the next page's follow hands over only what the first did not take, each message
 * once; the store keeps only its last `maxTests` tests, across a reload too.
 */
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incoming, storedTest } from '../log/storage-contract.js';
import { launchChromium, screenshot, servePages, type PageSite } from '../support/browser.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Following with the client library</title>
<script type="module">import * as client from '/client.js'; window.client = client; window.loaded = true;</script></head>
<body><h1>Following</h1><ol id="taken"></ol></body></html>`;

let site: PageSite;
let svc: TestService;
let browser: Browser;
let token: string;

beforeAll(async () => {
  const bundle = await build({
    // The package by its name, as an application imports it; the repository's export condition picks its source.
    stdin: { contents: "export * from '@result-collection-service/client';", resolveDir: process.cwd(), loader: 'ts' },
    conditions: ['@result-collection-service/source'],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
  });
  site = await servePages({
    '/': { type: 'text/html; charset=utf-8', body: PAGE },
    '/client.js': { type: 'text/javascript', body: bundle.outputFiles[0]?.text ?? '' },
  });
  svc = await startPipelineService({ env: { CORS_ALLOWED_ORIGINS: site.origin } });
  browser = await launchChromium();
  token = await defaultToken();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await site?.close();
});

/** Opens the page and starts following `id` there with the IndexedDB store; its taken sequences gather in `window.taken`. */
async function followOnPage(page: Page, id: string, transport: 'ws' | 'sse'): Promise<void> {
  await page.goto(`${site.origin}/`);
  await page.waitForFunction(() => (window as unknown as { loaded?: boolean }).loaded === true);
  await page.evaluate(
    ([api, t, correlationId, via]) => {
      const w = window as unknown as { client: typeof import('@result-collection-service/client'); taken: number[]; lastCursor?: string; end?: unknown };
      w.taken = [];
      const following = w.client.follow(correlationId, {
        url: api,
        transport: via,
        getToken: () => t,
        cursorStore: w.client.createIndexedDbCursorStore(),
        onMessage: (message) => {
          w.taken.push(message.sequence ?? -1);
          w.lastCursor = message.cursor;
          const item = document.createElement('li');
          item.textContent = String(message.sequence);
          document.getElementById('taken')?.append(item);
        },
      });
      void following.done.then((end) => (w.end = end));
    },
    [svc.url, token, id, transport] as const,
  );
}

/**
 * Waits until the page's store holds the cursor of the last message it took. The store commits
 * after `onMessage` returns, so a page closed in between is given that message again on the next
 * (at least once, as the library's README says); the case here is a reload once it was kept.
 */
const kept = (page: Page, id: string) =>
  page.waitForFunction(
    async (correlationId) => {
      const w = window as unknown as { client: typeof import('@result-collection-service/client'); lastCursor?: string };
      const cursor = await w.client.createIndexedDbCursorStore().get(correlationId);
      return cursor !== undefined && cursor === w.lastCursor;
    },
    id,
    { timeout: 15_000 },
  );

const taken = (page: Page) => page.evaluate(() => (window as unknown as { taken: number[] }).taken);
const reached = (page: Page, n: number) =>
  page.waitForFunction((count) => (window as unknown as { taken: number[] }).taken.length >= count, n, { timeout: 15_000 });

describe.each(['ws', 'sse'] as const)('the client library in Chromium over %s', (transport) => {
  it('resumes after a reload, once its IndexedDB store kept the last cursor: every message once, in order, across both pages', async () => {
    const id = await storedTest(svc.log, `browser-${transport}`, [{ sequence: 1 }, { sequence: 2 }]);
    const page = await browser.newPage();
    try {
      await followOnPage(page, id, transport);
      await reached(page, 2);
      const before = await taken(page);
      await kept(page, id);
      await page.reload();
      // Arrived while no page followed.
      await svc.log.append([incoming(id, { sequence: 3 })]);
      await followOnPage(page, id, transport);
      await reached(page, 1);
      await svc.log.append([incoming(id, { sequence: 4, final: true })]);
      await page.waitForFunction(() => (window as unknown as { end?: { status: string } }).end?.status === 'completed', undefined, { timeout: 15_000 });
      const after = await taken(page);
      await screenshot(page, `client-library-${transport}`);
      expect(before).toEqual([1, 2]);
      expect(after).toEqual([3, 4]);
    } finally {
      await page.close();
    }
  });
});

describe('the IndexedDB cursor store in Chromium', () => {
  it('keeps the last maxTests tests, oldest first seen going first, across a reload', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${site.origin}/`);
      await page.waitForFunction(() => (window as unknown as { loaded?: boolean }).loaded === true);
      const kept = await page.evaluate(async () => {
        const { client } = window as unknown as { client: typeof import('@result-collection-service/client') };
        const store = client.createIndexedDbCursorStore({ name: 'bound', maxTests: 2 });
        await store.set('a', 'a1');
        await store.set('b', 'b1');
        await store.set('a', 'a2');
        await store.set('c', 'c1');
        return Promise.all(['a', 'b', 'c'].map((id) => store.get(id)));
      });
      expect(kept).toEqual([undefined, 'b1', 'c1']);
      await page.reload();
      await page.waitForFunction(() => (window as unknown as { loaded?: boolean }).loaded === true);
      const reread = await page.evaluate(async () => {
        const { client } = window as unknown as { client: typeof import('@result-collection-service/client') };
        const store = client.createIndexedDbCursorStore({ name: 'bound', maxTests: 2 });
        return Promise.all(['a', 'b', 'c'].map((id) => store.get(id)));
      });
      expect(reread).toEqual([undefined, 'b1', 'c1']);
    } finally {
      await page.close();
    }
  });
});
