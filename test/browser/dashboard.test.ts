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
 *   and the live connection reconnects with the new one and keeps delivering;
 * - offline and back, then a reload: the open test (followed by the client library) shows every
 *   message once, in the test's order, whatever order they arrived in;
 * - what is looked at rather than read: a live chart of arrivals per second from the messages'
 *   `receivedAt`, status colours in the list (the status word kept), payloads pretty-printed in
 *   collapsible blocks; and a Sign out button that revokes the session, closes the connection and
 *   keeps the page signed out until the user signs in again with their password.
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
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/graphql')
      httpOperations.push((request.postDataJSON() as { operationName?: string }).operationName ?? '');
  });
  recorded.context.on('response', (response) => {
    if (new URL(response.url()).pathname !== '/oauth/token') return;
    const grantType = new URLSearchParams(response.request().postData() ?? '').get('grant_type') ?? '';
    void response.json().then(
      (body: { access_token?: string; refresh_token?: string }) =>
        tokens.push({ grantType, status: response.status(), accessToken: body.access_token, refreshToken: body.refresh_token }),
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
  const before = new URL(page.url()).hash;
  await page.getByRole('button', { name: 'Start' }).click();
  // With another test open, its detail shows until the new one's opens: wait for the new address.
  const hash = await eventually(
    () => {
      const now = new URL(page.url()).hash;
      return now.startsWith('#/tests/') && now !== before ? now : undefined;
    },
    15_000,
    "the started test's address",
  );
  const correlationId = decodeURIComponent(hash.slice('#/tests/'.length));
  await eventually(async () => (await page.getByTestId('detail-id').innerText()) === correlationId, 15_000, "the started test's detail");
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
  return eventually(
    async () => {
      const shown = await detail(page);
      return shown.ids.length === count && shown.status === status ? shown : undefined;
    },
    15_000,
    `the detail view to show ${count} messages and ${status}`,
  );
}

/** The list's row of one test: its status and message count, and how many rows it has. */
async function listRow(page: Page, correlationId: string) {
  const rows = page.locator(`[data-testid="test-row"][data-correlation-id="${correlationId}"]`);
  const count = await rows.count();
  if (count === 0) return { rows: 0, status: null, count: null };
  return { rows: count, status: await rows.first().getByTestId('row-status').innerText(), count: await rows.first().getByTestId('row-count').innerText() };
}

const publish = (correlationId: string, fields: ReadonlyArray<Record<string, unknown>>) =>
  producer.send(
    svc.topics.results,
    fields.map((f) => result(correlationId, f)),
  );

/** Each `testMessages` message the page received over its sockets: id → receivedAt, as the service sent it. */
function receivedTimes(page: Page): Map<string, string> {
  const times = new Map<string, string>();
  page.on('websocket', (socket) =>
    socket.on('framereceived', ({ payload }) => {
      const message = JSON.parse(String(payload)) as { type: string; payload?: { data?: { testMessages?: { id: string; receivedAt: string } } } };
      const received = message.type === 'next' ? message.payload?.data?.testMessages : undefined;
      if (received) times.set(received.id, received.receivedAt);
    }),
  );
  return times;
}

/** The chart's bars as drawn: the second each stands for, its count, and its drawn height. */
async function chartBars(page: Page) {
  return page.getByTestId('arrival-bar').evaluateAll((bars) =>
    bars.map((bar) => ({
      second: bar.getAttribute('data-second') ?? '',
      count: Number(bar.getAttribute('data-count')),
      height: (bar as SVGGraphicsElement).getBBox().height,
    })),
  );
}

/**
 * Arrivals per second worked out here from the received times: every second from the first
 * arrival's to the last one's, quiet ones as zero.
 */
function expectedBars(receivedAt: Iterable<string>): Array<{ second: string; count: number }> {
  const counts = new Map<number, number>();
  for (const time of receivedAt) {
    const second = Math.floor(Date.parse(time) / 1000) * 1000;
    counts.set(second, (counts.get(second) ?? 0) + 1);
  }
  const bars: Array<{ second: string; count: number }> = [];
  for (let second = Math.min(...counts.keys()); second <= Math.max(...counts.keys()); second += 1000)
    bars.push({ second: new Date(second).toISOString(), count: counts.get(second) ?? 0 });
  return bars;
}

/**
 * Waits until the detail view lists `messages` messages and the chart draws exactly the bars
 * their received times (as the socket delivered them) call for; returns the bars.
 */
async function chartMatches(page: Page, times: Map<string, string>, messages: number) {
  return eventually(
    async () => {
      const { ids } = await detail(page);
      const shown = ids.map((id) => times.get(id));
      if (ids.length !== messages || shown.some((t) => t === undefined)) return undefined;
      const bars = await chartBars(page);
      const expected = expectedBars(shown as string[]);
      return JSON.stringify(bars.map(({ second, count }) => ({ second, count }))) === JSON.stringify(expected) ? bars : undefined;
    },
    15_000,
    `the chart to show the arrivals of ${messages} messages per second`,
  );
}

describe('dashboard', () => {
  it('is served at /dashboard/ without a token, under the CSP, with its sign-in settings', async () => {
    const page = await fetch(`${svc.url}/dashboard/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(await page.text()).toMatch(/<script type="module" crossorigin src="\/dashboard\/assets\/[\w-]+\.js">/);
    const bare = await fetch(`${svc.url}/dashboard`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/dashboard/']);
    expect(await (await fetch(`${svc.url}/dashboard/config.json`)).json()).toEqual({
      signIn: { clientId: 'dashboard', scope: 'openid profile tests:read tests:write' },
    });
  });

  it('signs in through the login page, starts a test and watches it complete live; reloads carry on with no gap and no duplicate', async () => {
    await inContext(await watchedContext(), 'dashboard-failure', async (watched) => {
      const { page } = watched;
      await signIn(page);
      await screenshot(page, 'dashboard-signed-in');
      const correlationId = await startFromForm(page, 'nightly smoke', '{ "steps": 4, "suite": "smoke" }');
      await page.getByRole('heading', { level: 2, name: 'nightly smoke' }).waitFor();

      await publish(correlationId, [
        { sequence: 1, status: 'running', payload: { step: 1 } },
        { sequence: 2, status: 'running', payload: { step: 2 } },
      ]);
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

      await publish(correlationId, [
        { sequence: 3, status: 'running', payload: { step: 3 } },
        { sequence: 4, final: true, status: 'completed', payload: { passed: true } },
      ]);
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

  it("lists the user's tests with status and message count updated live, once each across reloads (recentTests + testChanges)", async () => {
    await inContext(await watchedContext(), 'dashboard-list-failure', async ({ page }) => {
      await signIn(page);
      const correlationId = await startFromForm(page, 'listed run', '{ "steps": 2 }');
      // The new test appears through testChanges (CREATED), with no message yet.
      await eventually(async () => (await listRow(page, correlationId)).rows === 1, 15_000, 'the started test in the list');
      expect((await listRow(page, correlationId)).count).toBe('0 messages');

      await publish(correlationId, [{ sequence: 1, status: 'running' }]);
      await eventually(
        async () => {
          const row = await listRow(page, correlationId);
          return row.status === 'RUNNING' && row.count === '1 message';
        },
        15_000,
        'the list row to show RUNNING with 1 message',
      );

      await publish(correlationId, [{ sequence: 2, final: true, status: 'completed' }]);
      await eventually(
        async () => {
          const row = await listRow(page, correlationId);
          return row.status === 'COMPLETED' && row.count === '2 messages';
        },
        15_000,
        'the list row to show COMPLETED with 2 messages',
      );
      await screenshot(page, 'dashboard-list-completed');

      // After a reload the list comes from recentTests: the test once, in its final state.
      await page.reload();
      await page.getByTestId('signed-in').waitFor();
      await eventually(
        async () => {
          const row = await listRow(page, correlationId);
          return row.rows === 1 && row.status === 'COMPLETED' && row.count === '2 messages';
        },
        15_000,
        'the reloaded list to show the test once, COMPLETED with 2 messages',
      );
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
      const renewal = await eventually(
        () => watched.tokens.find((t) => t.grantType === 'refresh_token'),
        (ACCESS_TOKEN_TTL_SECONDS + 5) * 1000,
        'a refresh-token renewal',
      );
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
      await eventually(
        () => watched.httpOperations.filter((name) => name === 'RecentTests').length > listReadsBefore,
        10_000,
        'the list to read recentTests again after the reconnect',
      );

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
  it("goes offline and back, and is reloaded: every message on the page once, in the test's order, whatever order they arrived in", async () => {
    await inContext(await watchedContext(), 'dashboard-offline-failure', async (watched) => {
      const { page, context } = watched;
      let socketsOpened = 0;
      page.on('websocket', () => void (socketsOpened += 1));
      await signIn(page);
      const correlationId = await startFromForm(page, 'offline and back', '{}');
      // 5 arrives before 4, as the simulator's reordering makes it happen.
      await publish(
        correlationId,
        [1, 2, 3, 5].map((sequence) => ({ sequence, status: 'running' })),
      );
      await detailShows(page, 4, 'RUNNING');
      const socketsBefore = socketsOpened;

      // Offline, Chromium lets an open WebSocket stay open while nothing reaches the page; the
      // library reconnects when the browser is online again, after the last message the page took.
      await context.setOffline(true);
      await publish(
        correlationId,
        [4, 6].map((sequence) => ({ sequence, status: 'running' })),
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await context.setOffline(false);
      const back = await detailShows(page, 6, 'RUNNING');
      expect(back.sequences).toEqual(['1', '2', '3', '4', '5', '6']);
      expect(new Set(back.ids).size).toBe(6);
      await eventually(() => socketsOpened > socketsBefore, 10_000, 'a new connection once online again');

      await page.reload();
      await page.getByTestId('signed-in').waitFor();
      expect((await detailShows(page, 6, 'RUNNING')).ids.toSorted()).toEqual(back.ids.toSorted());
      await publish(correlationId, [{ sequence: 7, final: true, status: 'completed' }]);
      const completed = await detailShows(page, 7, 'COMPLETED');
      expect(completed.sequences).toEqual(['1', '2', '3', '4', '5', '6', '7']);
      expect(new Set(completed.ids).size).toBe(7);
    });
  }, 90_000);
});

describe('dashboard, what is looked at', () => {
  it('charts arrivals per second live from the received times, pretty-prints each payload in a collapsible block, and colours statuses in the list', async () => {
    await inContext(await watchedContext(), 'dashboard-visuals-failure', async ({ page }) => {
      const times = receivedTimes(page);
      await signIn(page);
      // One test in each status, for the list's colours.
      const pending = await startFromForm(page, 'waiting run', '{}');
      const running = await startFromForm(page, 'busy run', '{}');
      await publish(running, [{ sequence: 1, status: 'running' }]);
      const failed = await startFromForm(page, 'broken run', '{}');
      await publish(failed, [{ sequence: 1, final: true, status: 'failed', payload: { error: 'disk full' } }]);
      await detailShows(page, 1, 'FAILED');

      const charted = await startFromForm(page, 'charted run', '{ "steps": 5 }');
      expect(await page.getByTestId('arrivals-chart').count()).toBe(0);
      const payloads = [
        { step: 1, checks: { passed: 3, failed: 0 }, tags: ['smoke', 'fast'], host: 'runner-07.example.internal' },
        { step: 2, checks: { passed: 5, failed: 0 } },
        { step: 3 },
      ];
      await publish(
        charted,
        payloads.map((payload, i) => ({ sequence: i + 1, status: 'running', payload })),
      );
      await detailShows(page, 3, 'RUNNING');
      const first = await chartMatches(page, times, 3);
      expect(first.reduce((sum, bar) => sum + bar.count, 0)).toBe(3);
      await screenshot(page, 'dashboard-chart-live');

      // The next messages in a later second of the service's clock (the machine's), so the chart
      // has more than one bar; then it must grow live, with no reload.
      const lastSecond = Math.max(...first.map((bar) => Date.parse(bar.second) / 1000));
      await eventually(() => Math.floor(Date.now() / 1000) > lastSecond, 5_000, 'the clock to pass into the next second');
      await publish(charted, [
        { sequence: 4, status: 'running', payload: { step: 4 } },
        { sequence: 5, final: true, status: 'completed', payload: { passed: true, summary: { steps: 5, duration: 'PT3S' } } },
      ]);
      await detailShows(page, 5, 'COMPLETED');
      const bars = await chartMatches(page, times, 5);
      expect(bars.length).toBeGreaterThanOrEqual(2);
      expect(bars.reduce((sum, bar) => sum + bar.count, 0)).toBe(5);
      // Heights in proportion to the counts: the busiest second fills the plot.
      const peak = Math.max(...bars.map((b) => b.count));
      const full = Math.max(...bars.map((b) => b.height));
      for (const bar of bars) expect(bar.height).toBeCloseTo((full * bar.count) / peak, 1);
      expect(await page.getByRole('img', { name: /^Arrivals per second: 5 messages over \d+ seconds?, at most \d+ in one second$/ }).count()).toBe(1);
      await screenshot(page, 'dashboard-chart');

      // Payloads: closed at first, showing one line (cut short when long); opened, the indented JSON.
      const blocks = page.getByTestId('payload');
      expect(await blocks.count()).toBe(5);
      const firstBlock = blocks.first();
      expect(await firstBlock.evaluate((e) => (e as HTMLDetailsElement).open)).toBe(false);
      expect(await firstBlock.getByTestId('payload-json').isVisible()).toBe(false);
      const summary = await firstBlock.locator('summary').innerText();
      expect(summary.endsWith('…')).toBe(true);
      expect(JSON.stringify(payloads[0]).startsWith(summary.slice(0, -1))).toBe(true);
      expect(await blocks.nth(2).locator('summary').innerText()).toBe(JSON.stringify(payloads[2]));

      await firstBlock.locator('summary').click();
      expect(await firstBlock.evaluate((e) => (e as HTMLDetailsElement).open)).toBe(true);
      expect(await firstBlock.getByTestId('payload-json').isVisible()).toBe(true);
      expect(await firstBlock.getByTestId('payload-json').innerText()).toBe(JSON.stringify(payloads[0], null, 2));
      const last = blocks.nth(4);
      await last.locator('summary').click();
      expect(await last.getByTestId('payload-json').innerText()).toBe(JSON.stringify({ passed: true, summary: { steps: 5, duration: 'PT3S' } }, null, 2));
      // Each block on its own: the others stay closed.
      expect(await blocks.evaluateAll((all) => all.map((e) => (e as HTMLDetailsElement).open))).toEqual([true, false, false, false, true]);
      await screenshot(page, 'dashboard-payload-expanded');
      await firstBlock.locator('summary').click();
      expect(await firstBlock.evaluate((e) => (e as HTMLDetailsElement).open)).toBe(false);
      expect(await firstBlock.getByTestId('payload-json').isVisible()).toBe(false);

      // The list: each row coloured by its status, the status word still there; four colours.
      const expected = { [pending]: 'PENDING', [running]: 'RUNNING', [failed]: 'FAILED', [charted]: 'COMPLETED' };
      const colours = await eventually(
        async () => {
          const seen: Array<{ badge: string; edge: string }> = [];
          for (const [correlationId, status] of Object.entries(expected)) {
            const row = page.locator(`[data-testid="test-row"][data-correlation-id="${correlationId}"]`);
            if ((await row.count()) !== 1 || (await row.getByTestId('row-status').innerText()) !== status) return undefined;
            expect(await row.getAttribute('class')).toBe(`rcs-row-${status.toLowerCase()}`);
            const badge = row.getByTestId('row-status');
            expect(await badge.getAttribute('class')).toBe(`rcs-status rcs-status-${status.toLowerCase()}`);
            seen.push({
              badge: await badge.evaluate((e) => getComputedStyle(e).backgroundColor),
              edge: await row.evaluate((e) => getComputedStyle(e).borderLeftColor),
            });
          }
          return seen;
        },
        15_000,
        'every list row in its status',
      );
      expect(new Set(colours.map((c) => c.badge)).size).toBe(4);
      expect(new Set(colours.map((c) => c.edge)).size).toBe(4);
      await screenshot(page, 'dashboard-list-statuses');
    });
  }, 90_000);

  it('signs out: the session is revoked, the connection closed, no token kept, and the page stays signed out until the password is given again', async () => {
    await inContext(await watchedContext(), 'dashboard-sign-out-failure', async (watched) => {
      const { page } = watched;
      const open: Set<string> = new Set();
      let socketsOpened = 0;
      page.on('websocket', (socket) => {
        const id = String((socketsOpened += 1));
        open.add(id);
        socket.on('close', () => open.delete(id));
      });
      const revocations: number[] = [];
      watched.context.on('response', (response) => {
        if (new URL(response.url()).pathname === '/oauth/revoke') revocations.push(response.status());
      });
      await signIn(page);
      const correlationId = await startFromForm(page, 'before signing out', '{}');
      await publish(correlationId, [{ sequence: 1, status: 'running' }]);
      await detailShows(page, 1, 'RUNNING');
      // The list's socket (its testChanges) and the open test's (the client library follows it on a socket of its own).
      expect(open.size).toBe(2);
      await eventually(() => watched.tokens.some((t) => t.grantType === 'authorization_code'), 5_000, "the sign-in's token answer");

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.getByRole('status').innerText()).toBe('You signed out.');
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await page.getByTestId('signed-in').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
      expect(await page.getByTestId('message').count()).toBe(0);
      expect(revocations).toEqual([200]);
      await eventually(() => open.size === 0, 10_000, 'the live connection to close');
      await screenshot(page, 'dashboard-signed-out');

      // The newest refresh token (the one the page held) no longer renews anything: the grant is gone.
      const held = watched.tokens.filter((t) => t.refreshToken !== undefined).at(-1)?.refreshToken ?? '';
      const refused = await fetch(`${svc.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: held, client_id: 'dashboard' }),
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant');
      // Nothing a script can read holds a token; only the note that the user signed out remains.
      const issued = watched.tokens.flatMap((t) => [t.accessToken, t.refreshToken]).filter((t): t is string => t !== undefined);
      const storage = await page.evaluate(() => ({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie }));
      for (const token of issued) expect(JSON.stringify(storage)).not.toContain(token);
      expect(storage.local).toEqual({ 'rcs.dashboard.signed-out': 'true' });

      // A reload stays signed out: no silent sign-in through the issuer's still-open session.
      const requestsBefore = watched.urls.length;
      await page.reload();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.getByTestId('signed-in').count()).toBe(0);
      expect(watched.urls.slice(requestsBefore).filter((url) => new URL(url).pathname.startsWith('/oauth/'))).toEqual([]);

      // Signing in again asks for the password (the login page), then clears the note.
      await page.getByRole('button', { name: 'Sign in' }).click();
      await signInOnLoginPage(page, USER);
      expect(await page.evaluate(() => localStorage.getItem('rcs.dashboard.signed-out'))).toBeNull();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
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
