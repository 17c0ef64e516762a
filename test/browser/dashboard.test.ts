/// <reference lib="dom" />
/**
 * The dashboard in a real browser, against a real service with its embedded issuer and a (mock)
 * broker to which the test publishes result records as the external system would:
 *
 * - a user signs in through the issuer's login page (code + PKCE), starts a test from the form,
 *   and watches its messages arrive and the test complete; reloads carry on with no gap and no
 *   duplicate (silent re-authorization, no login page again); tokens never reach script-readable
 *   storage; nothing leaves the service's origin; nothing violates the CSP;
 * - the list of the user's tests (`recentTests` + `testChanges`) shows the test and updates its
 *   status and message count live, once per test across reloads;
 * - the access token is renewed with the refresh token before it expires (rotated at each use),
 *   and the live connection reconnects with the new one and keeps delivering.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/http/security-headers.js';
import { foreignUrls, inContext, recordingContext, screenshot, type RecordingContext } from '../support/browser.js';
import { signInOnLoginPage, startBrowserService, type BrowserService } from '../support/browser-service.js';
import { eventually } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import type { MockClusterService } from '../support/mock-service.js';

const USER = { username: 'grace', password: 'a long and memorable passphrase', sub: 'user-grace', name: 'Grace Hopper' };
/** Short-lived access tokens, so that a renewal happens within a test (at two thirds: 10 s). */
const ACCESS_TOKEN_TTL_SECONDS = 15;

let fixture: BrowserService;
let producer: TestProducer;
let svc: MockClusterService;
let browser: Browser;

beforeAll(async () => {
  fixture = await startBrowserService({
    label: 'dashboard',
    issuer: { clientId: 'dashboard', redirectPath: '/dashboard/', user: USER },
    env: { OIDC_ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TOKEN_TTL_SECONDS), DASHBOARD: 'true', DASHBOARD_CLIENT_ID: 'dashboard' },
  });
  ({ svc, browser } = fixture);
  producer = await createTestProducer(svc.cluster.bootstrapServers);
}, 120_000);

afterAll(async () => {
  await producer?.disconnect();
  await fixture?.stop();
});

/** What the token endpoint answered the page, in order. */
interface TokenAnswer {
  readonly grantType: string;
  readonly status: number;
  readonly accessToken?: string;
  readonly refreshToken?: string;
}

/**
 * A recording context that also keeps the token endpoint's answers, the sockets' `connection_init`
 * tokens, and the name of each operation sent over HTTP.
 */
async function watchedContext(): Promise<RecordingContext & { tokens: TokenAnswer[]; socketTokens: string[]; httpOperations: string[] }> {
  const recorded = await recordingContext(browser);
  const tokens: TokenAnswer[] = [];
  const socketTokens: string[] = [];
  const httpOperations: string[] = [];
  recorded.context.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/graphql') httpOperations.push((request.postDataJSON() as { operationName?: string }).operationName ?? '');
  });
  recorded.context.on('response', (response) => {
    if (new URL(response.url()).pathname !== '/oauth/token') return;
    const grantType = new URLSearchParams(response.request().postData() ?? '').get('grant_type') ?? '';
    void response.json().then(
      (body: { access_token?: string; refresh_token?: string }) => tokens.push({ grantType, status: response.status(), accessToken: body.access_token, refreshToken: body.refresh_token }),
      () => tokens.push({ grantType, status: response.status() }),
    );
  });
  recorded.page.on('websocket', (socket) =>
    socket.on('framesent', ({ payload }) => {
      const message = JSON.parse(String(payload)) as { type: string; payload?: { authorization?: string } };
      if (message.type === 'connection_init') socketTokens.push(message.payload?.authorization ?? '');
    }),
  );
  return { ...recorded, tokens, socketTokens, httpOperations };
}

/** Signs in from the dashboard through the issuer's login page. */
async function signIn(page: Page): Promise<void> {
  await page.goto(`${svc.url}/dashboard/`);
  // The silent attempt finds no session at the issuer and comes back: the page offers to sign in.
  await page.getByRole('button', { name: 'Sign in' }).click();
  await signInOnLoginPage(page, USER);
}

/** Starts a test from the form; returns its correlation id once its detail view is open. */
async function startFromForm(page: Page, name: string, parameters: string): Promise<string> {
  await page.locator('input[name="name"]').fill(name);
  await page.locator('textarea[name="parameters"]').fill(parameters);
  await page.getByRole('button', { name: 'Start' }).click();
  const correlationId = await page.getByTestId('detail-id').innerText();
  expect(new URL(page.url()).hash).toBe(`#/tests/${correlationId}`);
  return correlationId;
}

/** The detail view as the user sees it: status, count, and each message's id and sequence. */
async function detail(page: Page) {
  const rows = page.getByTestId('message');
  return {
    status: await page.getByTestId('detail-status').innerText(),
    count: await page.getByTestId('detail-count').innerText(),
    ids: await rows.evaluateAll((elements) => elements.map((e) => e.getAttribute('data-id') ?? '')),
    sequences: await rows.evaluateAll((elements) => elements.map((e) => e.querySelector('td')?.textContent ?? '')),
  };
}

/** Waits until the detail view shows `count` messages and `status`. */
async function detailShows(page: Page, count: number, status: string) {
  return eventually(async () => {
    const shown = await detail(page);
    return shown.ids.length === count && shown.status === status ? shown : undefined;
  }, 15_000, `the detail view to show ${count} messages and ${status}`);
}

/** The list's row of one test: its status and message count, and how many rows it has. */
async function listRow(page: Page, correlationId: string) {
  const rows = page.locator(`[data-testid="test-row"][data-correlation-id="${correlationId}"]`);
  const count = await rows.count();
  if (count === 0) return { rows: 0, status: null, count: null };
  return { rows: count, status: await rows.first().getByTestId('row-status').innerText(), count: await rows.first().getByTestId('row-count').innerText() };
}

const publish = (correlationId: string, fields: ReadonlyArray<Record<string, unknown>>) => producer.send(svc.topics.results, fields.map((f) => result(correlationId, f)));

describe('dashboard', () => {
  it('is served at /dashboard/ without a token, under the CSP, with its sign-in settings', async () => {
    const page = await fetch(`${svc.url}/dashboard/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(await page.text()).toMatch(/<script type="module" crossorigin src="\/dashboard\/assets\/[\w-]+\.js">/);
    const bare = await fetch(`${svc.url}/dashboard`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/dashboard/']);
    expect(await (await fetch(`${svc.url}/dashboard/config.json`)).json()).toEqual({ signIn: { clientId: 'dashboard', scope: 'openid profile tests:read tests:write' } });
  });

  it('signs in through the login page, starts a test and watches it complete live; reloads carry on with no gap and no duplicate', async () => {
    await inContext(await watchedContext(), 'dashboard-failure', async (watched) => {
      const { page } = watched;
      await signIn(page);
      await screenshot(page, 'dashboard-signed-in');
      const correlationId = await startFromForm(page, 'nightly smoke', '{ "steps": 4, "suite": "smoke" }');
      await page.getByRole('heading', { level: 2, name: 'nightly smoke' }).waitFor();

      await publish(correlationId, [{ sequence: 1, status: 'running', payload: { step: 1 } }, { sequence: 2, status: 'running', payload: { step: 2 } }]);
      const running = await detailShows(page, 2, 'RUNNING');
      expect(running.count).toBe('2 messages');
      await screenshot(page, 'dashboard-running');

      // A reload mid-stream: silently signed in again (no login page), the same test open, the
      // stored messages replayed once each, then the live ones.
      const htmlBefore = watched.htmlPages.length;
      await page.reload();
      await page.getByTestId('signed-in').waitFor();
      expect(watched.htmlPages.slice(htmlBefore).map((p) => p.path)).not.toContainEqual(expect.stringMatching(/^\/interaction\//));
      expect(new URL(page.url()).hash).toBe(`#/tests/${correlationId}`);
      expect((await detailShows(page, 2, 'RUNNING')).ids).toEqual(running.ids);

      await publish(correlationId, [{ sequence: 3, status: 'running', payload: { step: 3 } }, { sequence: 4, final: true, status: 'completed', payload: { passed: true } }]);
      const completed = await detailShows(page, 4, 'COMPLETED');
      expect(completed.sequences).toEqual(['1', '2', '3', '4']);
      expect(new Set(completed.ids).size).toBe(4);
      expect(completed.ids.slice(0, 2)).toEqual(running.ids);
      await screenshot(page, 'dashboard-completed');

      await page.reload();
      await page.getByTestId('signed-in').waitFor();
      const again = await detailShows(page, 4, 'COMPLETED');
      expect(again.ids).toEqual(completed.ids);

      // Tokens live in memory only: neither token is in storage or a cookie a script can read.
      const issued = watched.tokens.flatMap((t) => [t.accessToken, t.refreshToken]).filter((t): t is string => t !== undefined);
      expect(issued.length).toBeGreaterThanOrEqual(4);
      const readable = await page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie }));
      for (const token of issued) expect(readable).not.toContain(token);

      expect(foreignUrls(watched, svc.url)).toEqual([]);
      expect(watched.sockets.every((url) => url === `${svc.url.replace('http', 'ws')}/graphql`)).toBe(true);
      // The dashboard (the first load and its silent attempt's return, the sign-in's return, and
      // per reload the page and its silent sign-in's return) and the login page, each under the policy.
      expect(watched.htmlPages.filter((p) => p.path === '/dashboard/').length).toBe(7);
      for (const htmlPage of watched.htmlPages) expect(htmlPage).toEqual({ path: htmlPage.path, csp: CONTENT_SECURITY_POLICY, nosniff: 'nosniff' });
      expect(watched.violations).toEqual([]);
    });
  }, 90_000);

  it('lists the user\'s tests with status and message count updated live, once each across reloads (recentTests + testChanges)', async () => {
    await inContext(await watchedContext(), 'dashboard-list-failure', async ({ page }) => {
      await signIn(page);
      const correlationId = await startFromForm(page, 'listed run', '{ "steps": 2 }');
      // The new test appears through testChanges (CREATED), with no message yet.
      await eventually(async () => (await listRow(page, correlationId)).rows === 1, 15_000, 'the started test in the list');
      expect((await listRow(page, correlationId)).count).toBe('0 messages');

      await publish(correlationId, [{ sequence: 1, status: 'running' }]);
      await eventually(async () => {
        const row = await listRow(page, correlationId);
        return row.status === 'RUNNING' && row.count === '1 message';
      }, 15_000, 'the list row to show RUNNING with 1 message');

      await publish(correlationId, [{ sequence: 2, final: true, status: 'completed' }]);
      await eventually(async () => {
        const row = await listRow(page, correlationId);
        return row.status === 'COMPLETED' && row.count === '2 messages';
      }, 15_000, 'the list row to show COMPLETED with 2 messages');
      await screenshot(page, 'dashboard-list-completed');

      // After a reload the list comes from recentTests: the test once, in its final state.
      await page.reload();
      await page.getByTestId('signed-in').waitFor();
      await eventually(async () => {
        const row = await listRow(page, correlationId);
        return row.rows === 1 && row.status === 'COMPLETED' && row.count === '2 messages';
      }, 15_000, 'the reloaded list to show the test once, COMPLETED with 2 messages');
      expect(await page.getByTestId('list-problem').count()).toBe(0);
    });
  }, 90_000);

  it('renews the access token with the rotating refresh token before it expires and keeps delivering over a new connection', async () => {
    await inContext(await watchedContext(), 'dashboard-renewal-failure', async (watched) => {
      const { page } = watched;
      await signIn(page);
      const correlationId = await startFromForm(page, 'across a renewal', '{}');
      // Read before the renewal, which comes 10 s after the sign-in.
      const listReadsBefore = watched.httpOperations.filter((name) => name === 'RecentTests').length;
      expect(listReadsBefore).toBeGreaterThan(0);
      await publish(correlationId, [{ sequence: 1, status: 'running' }]);
      await detailShows(page, 1, 'RUNNING');

      // Two thirds into the token's life the page renews it, before the service would close the socket.
      const renewal = await eventually(() => watched.tokens.find((t) => t.grantType === 'refresh_token'), (ACCESS_TOKEN_TTL_SECONDS + 5) * 1000, 'a refresh-token renewal');
      const signInAnswer = watched.tokens.find((t) => t.grantType === 'authorization_code');
      expect(renewal.status).toBe(200);
      expect(renewal.accessToken).toBeDefined();
      expect(renewal.accessToken).not.toBe(signInAnswer?.accessToken);
      // Rotated: a new refresh token came back (the spent one is refused, checked below).
      expect(renewal.refreshToken).toBeDefined();
      expect(renewal.refreshToken).not.toBe(signInAnswer?.refreshToken);
      // The socket was opened again with the new token, and the list read its query again for
      // whatever changed while no socket was open (testChanges replays nothing).
      await eventually(() => watched.socketTokens.includes(`Bearer ${renewal.accessToken}`), 10_000, 'a connection_init with the renewed token');
      await eventually(() => watched.httpOperations.filter((name) => name === 'RecentTests').length > listReadsBefore, 10_000, 'the list to read recentTests again after the reconnect');

      await publish(correlationId, [{ sequence: 2, final: true, status: 'completed' }]);
      const shown = await detailShows(page, 2, 'COMPLETED');
      expect(shown.sequences).toEqual(['1', '2']);

      const spent = await fetch(`${svc.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: signInAnswer?.refreshToken ?? '', client_id: 'dashboard' }),
      });
      expect(spent.status).toBe(400);
      expect(((await spent.json()) as { error: string }).error).toBe('invalid_grant');
    });
  }, 90_000);
});

describe('dashboard turned off', () => {
  it('answers 404 with how to turn it on', async () => {
    const off = await svc.startAnother('off', { env: { DASHBOARD: 'false' } });
    try {
      for (const path of ['/dashboard/', '/dashboard/config.json']) {
        const response = await fetch(`${off.url}${path}`, { headers: { accept: 'text/html' } });
        expect(response.status).toBe(404);
        expect(((await response.json()) as { detail: string }).detail).toMatch(/DASHBOARD=false/);
      }
    } finally {
      await off.stop();
    }
  });
});
