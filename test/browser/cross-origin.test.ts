/**
 * A page served from another local origin calls the API from a real browser: with `fetch` over
 * HTTP, with a graphql-ws subscription, and with a graphql-sse subscription that reconnects with
 * Last-Event-ID. Allowed when its origin is in CORS_ALLOWED_ORIGINS;
 * blocked by the browser itself when it is not (the call never reaches the resolvers).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot, servePages, type PageSite } from '../support/browser.js';
import { startBrowserService, type BrowserService } from '../support/browser-service.js';
import { postGraphQL } from '../support/graphql.js';
import { countCreates, type TestService } from '../support/service.js';
import { mintToken } from '../support/tokens.js';

const START = 'mutation($name: String) { startTest(input: { name: $name, parameters: { steps: 3, intervalMs: 200 } }) { correlationId } }';
const FOLLOW = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence final } }';
const FOLLOW_WITH_CURSOR = 'subscription($id: ID!) { testMessages(correlationId: $id) { cursor sequence final } }';

let fixture: BrowserService;
let svc: TestService;
let browser: Browser;
let listed: PageSite;
let unlisted: PageSite;
let token: string;
const starts = countCreates();

interface CallOutcome {
  status?: number;
  body?: { data?: any; errors?: any[] };
  error?: string;
}
interface FollowOutcome {
  messages: Array<{ data?: { testMessages: { sequence: number; final: boolean } } }>;
  error?: { type: string; closeCode: number | null };
}

const callApi = (page: Page, query: string, variables?: Record<string, unknown>) =>
  page.evaluate(([api, t, q, v]) => (globalThis as any).callApi(api, t, q, v), [svc.url, token, query, variables] as const) as Promise<CallOutcome>;
const follow = (page: Page, id: string) =>
  page.evaluate(([api, t, q, v]) => (globalThis as any).follow(api, t, q, v), [svc.url, token, FOLLOW, { id }] as const) as Promise<FollowOutcome>;

beforeAll(async () => {
  const files = {
    '/': { type: 'text/html; charset=utf-8', body: readFileSync(new URL('cross-origin-page.html', import.meta.url)) },
    '/graphql-ws.js': {
      type: 'text/javascript',
      body: readFileSync(join(dirname(createRequire(import.meta.url).resolve('graphql-ws')), '../umd/graphql-ws.js')),
    },
    '/graphql-sse.js': {
      type: 'text/javascript',
      body: readFileSync(join(dirname(createRequire(import.meta.url).resolve('graphql-sse')), '../umd/graphql-sse.js')),
    },
  };
  [listed, unlisted] = await Promise.all([servePages(files), servePages(files)]);
  fixture = await startBrowserService({ label: 'cross-origin', simulator: true, env: { CORS_ALLOWED_ORIGINS: listed.origin }, wrapLog: starts.wrapLog });
  ({ svc, browser } = fixture);
  token = await mintToken({ sub: 'browser-user' }, { expiresInSeconds: 600 });
}, 120_000);

afterAll(async () => {
  await fixture?.stop();
  await Promise.all([listed?.close(), unlisted?.close()]);
});

describe('a page on a listed origin', () => {
  it('starts a test with fetch and follows it live over a graphql-ws subscription', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${listed.origin}/`);
      const started = await callApi(page, START, { name: 'from-a-listed-origin' });
      expect(started.error).toBeUndefined();
      expect(started.status).toBe(200);
      const id = started.body?.data?.startTest.correlationId as string;
      expect(id).toMatch(/\S/);

      const followed = await follow(page, id);
      expect(followed.error).toBeUndefined();
      expect(followed.messages.map((m) => m.data?.testMessages.sequence)).toEqual([1, 2, 3, 4]);
      expect(followed.messages.at(-1)?.data?.testMessages.final).toBe(true);

      const read = await callApi(page, 'query($id: ID!) { test(correlationId: $id) { status messageCount } }', { id });
      expect(read.body?.data?.test).toEqual({ status: 'COMPLETED', messageCount: 4 });
      await screenshot(page, 'cross-origin-listed');
    } finally {
      await page.close();
    }
  });
});

describe('a page on a listed origin, over SSE', () => {
  it('follows a test with graphql-sse, drops the connection mid-stream and resumes with Last-Event-ID: nothing lost or repeated', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${listed.origin}/`);
      const started = await callApi(page, START, { name: 'sse-from-a-listed-origin' });
      const id = started.body?.data?.startTest.correlationId as string;
      const followed = (await page.evaluate(([api, t, q, v]) => (globalThis as any).followSse(api, t, q, v, 2), [
        svc.url,
        token,
        FOLLOW_WITH_CURSOR,
        { id },
      ] as const)) as FollowOutcome;
      expect(followed.error).toBeUndefined();
      expect(followed.messages.map((m) => m.data?.testMessages.sequence)).toEqual([1, 2, 3, 4]);
      await screenshot(page, 'cross-origin-sse');
    } finally {
      await page.close();
    }
  });
});

describe('a page on an origin that is not listed', () => {
  it('is stopped by the browser: fetch fails at the preflight and the mutation never runs', async () => {
    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    try {
      await page.goto(`${unlisted.origin}/`);
      const before = starts.count();
      const outcome = await callApi(page, START, { name: 'from-an-unlisted-origin' });
      expect(outcome).toEqual({ error: 'TypeError: Failed to fetch' });
      expect(consoleErrors.join('\n')).toMatch(/blocked by CORS policy/);
      expect(starts.count()).toBe(before);
      await screenshot(page, 'cross-origin-unlisted');
    } finally {
      await page.close();
    }
  });

  it('cannot open the subscription: the WebSocket upgrade is refused', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${unlisted.origin}/`);
      // A real test to follow, so only the origin can be the reason for the refusal.
      const started = await postGraphQL(svc.url, START, { name: 'followed-from-an-unlisted-origin' }, { token });
      const id = started.body.data?.startTest.correlationId as string;
      expect(id).toMatch(/\S/);
      const outcome = await follow(page, id);
      expect(outcome.messages).toEqual([]);
      // The upgrade got a 403: the browser reports an error event and an abnormal close (1006),
      // where a refused token would close an open socket with 4403.
      expect(outcome.error).toEqual({ type: 'error', closeCode: 1006 });
    } finally {
      await page.close();
    }
  });
});
