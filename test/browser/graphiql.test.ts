/// <reference lib="dom" />
/**
 * GraphiQL in a real browser: served by the service without a token, with every request staying on
 * the service's origin; a user signs in through the embedded issuer (code + PKCE) from the page,
 * which fills the Authorization header, then runs a mutation over HTTP and a subscription over
 * graphql-ws whose live messages the page shows. Every HTML page (GraphiQL, the issuer's login page)
 * carries the Content-Security-Policy and nosniff, and the browser reports no violation of the policy.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/http/security-headers.js';
import { foreignUrls, inContext, recordingContext, screenshot } from '../support/browser.js';
import { signInOnLoginPage, startBrowserService, type BrowserService } from '../support/browser-service.js';
import { eventually } from '../support/graphql.js';
import type { MockClusterService } from '../support/mock-service.js';

const USER = { username: 'ada', password: 'correct horse battery staple', sub: 'user-ada', name: 'Ada Lovelace' };

let fixture: BrowserService;
let svc: MockClusterService;
let browser: Browser;

beforeAll(async () => {
  fixture = await startBrowserService({
    label: 'graphiql',
    issuer: { clientId: 'graphiql', redirectPath: '/graphql', user: USER },
    simulator: true,
    env: { GRAPHQL_IDE: 'true', GRAPHQL_IDE_CLIENT_ID: 'graphiql' },
  });
  ({ svc, browser } = fixture);
}, 120_000);

afterAll(() => fixture?.stop());

/**
 * Replaces the operation in GraphiQL's query editor (Monaco) with `text`, one operation named
 * `name`, and waits until GraphiQL has parsed it, which it does 100 ms after the last keystroke.
 * Before that the execute button still stands for the old text: over the page's three-operation
 * example it is the operation picker, so a click (at a script's speed, not a person's) opens a
 * menu the re-render closes and nothing is sent; over the mutation, a subscription would go over
 * HTTP under the mutation's document. Once parsed, the active tab is titled with the name.
 */
async function setQuery(page: Page, name: string, text: string): Promise<void> {
  await page.locator('.graphiql-query-editor .monaco-editor').first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
  await page.locator('.graphiql-tab-active').getByText(name, { exact: true }).waitFor();
}

/** What the response pane shows (Monaco renders spaces as no-break spaces). */
const responseText = async (page: Page) => (await page.locator('.graphiql-response').innerText()).replace(/\u00a0/g, ' ');

describe('GraphiQL', () => {
  it('is served to a browser without a token; JSON clients still get the GraphQL endpoint', async () => {
    const html = await fetch(`${svc.url}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await html.text()).toMatch(/<script type="module" crossorigin src="\/graphiql\/assets\/[\w-]+\.js">/);
    // With a token too: the GraphQL server's own landing page never answers a browser.
    const withToken = await fetch(`${svc.url}/graphql`, { headers: { accept: 'text/html', authorization: 'Bearer anything' } });
    expect(await withToken.text()).toContain('/graphiql/assets/');
    const json = await fetch(`${svc.url}/graphql?query=%7B__typename%7D`, { headers: { accept: 'application/json' } });
    expect(json.status).toBe(401);
    expect(json.headers.get('x-content-type-options')).toBe('nosniff');
    const settings = await fetch(`${svc.url}/graphiql/config.json`);
    expect(await settings.json()).toEqual({ signIn: { clientId: 'graphiql', scope: 'openid profile tests:read tests:write' } });
  });

  it("loads with every request on the service's own origin, signs in with code + PKCE, runs a mutation and shows a subscription's live messages, all under the CSP", async () => {
    await inContext(await recordingContext(browser), 'graphiql-failure', async ({ page, urls, sockets, graphqlAuth, htmlPages, violations }) => {
      await page.goto(`${svc.url}/graphql`);
      await page.locator('.graphiql-container').waitFor();
      await page.getByRole('button', { name: 'Sign in' }).click();

      // The issuer's login page, on the same origin; then back to GraphiQL with a code.
      await signInOnLoginPage(page, USER);
      // Before signing in, the page's schema request went without a token (and got a 401); from now on every call carries one.
      graphqlAuth.length = 0;
      await page.locator('.graphiql-query-editor .monaco-editor').first().waitFor();

      await setQuery(
        page,
        'StartFromGraphiQL',
        'mutation StartFromGraphiQL { startTest(input: { name: "from GraphiQL", parameters: { steps: 5, intervalMs: 400 } }) { correlationId } }',
      );
      await page.locator('.graphiql-execute-button').click();
      const correlationId = await eventually(
        async () => /"correlationId": "([^"]+)"/.exec(await responseText(page))?.[1],
        15_000,
        "the mutation's answer in the response pane",
      );
      expect(graphqlAuth.length).toBeGreaterThan(0);
      for (const header of graphqlAuth) expect(header).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);

      await setQuery(page, 'FollowFromGraphiQL', `subscription FollowFromGraphiQL { testMessages(correlationId: "${correlationId}") { sequence final } }`);
      // Every sequence the response pane shows, recorded in the page as it renders: sampling it from
      // here, one round trip a sample, missed messages on a loaded machine.
      await page.evaluate(() => {
        const pane = document.querySelector('.graphiql-response') as HTMLElement;
        const shown = new Set<string>();
        (window as unknown as { shownSequences: Set<string> }).shownSequences = shown;
        new MutationObserver(() => {
          const sequence = /"sequence": (\d+)/.exec(pane.innerText.replace(/\u00a0/g, ' '))?.[1];
          if (sequence !== undefined) shown.add(sequence);
        }).observe(pane, { subtree: true, childList: true, characterData: true });
      });
      await page.locator('.graphiql-execute-button').click();
      // GraphiQL shows each message as it arrives: live ones, then the final one.
      const seen = await eventually(
        async () => {
          const shown = await page.evaluate(() => [...(window as unknown as { shownSequences: Set<string> }).shownSequences]);
          return shown.includes('6') && shown;
        },
        20_000,
        'the final message in the response pane',
      );
      // At least one message before the final: shown live, not all at the end (the steps are 400 ms apart).
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(await responseText(page)).toMatch(/"final": true/);
      await screenshot(page, 'graphiql-subscription');

      const own = new URL(svc.url);
      expect(foreignUrls({ urls, sockets }, svc.url)).toEqual([]);
      expect(urls.some((url) => new URL(url).pathname.startsWith('/graphiql/assets/'))).toBe(true);
      expect(sockets).toEqual([expect.stringMatching(new RegExp(`^ws://${own.host}/graphql$`))]);
      // GraphiQL, the issuer's login page and redirects, and GraphiQL again after signing in: each
      // under the policy, and nothing violated it.
      const paths = htmlPages.map((p) => p.path);
      expect([paths[0], paths.at(-1)]).toEqual(['/graphql', '/graphql']);
      expect(paths).toContainEqual(expect.stringMatching(/^\/interaction\/[\w-]+$/));
      for (const htmlPage of htmlPages) expect(htmlPage).toEqual({ path: htmlPage.path, csp: CONTENT_SECURITY_POLICY, nosniff: 'nosniff' });
      expect(violations).toEqual([]);
    });
  }, 90_000);
});

describe('GraphiQL sign-in link', () => {
  it("/graphql?sign-in goes straight to the issuer's login page, which is under the CSP", async () => {
    const { context, page, htmlPages, violations } = await recordingContext(browser);
    try {
      await page.goto(`${svc.url}/graphql?sign-in`);
      await page.locator('input[name="username"]').waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/interaction\/[\w-]+$/);
      await screenshot(page, 'graphiql-sign-in');
      const login = htmlPages.at(-1);
      expect(login).toEqual({ path: new URL(page.url()).pathname, csp: CONTENT_SECURITY_POLICY, nosniff: 'nosniff' });
      expect(violations).toEqual([]);
      // The policy is enforced, and a violation would be seen: an image from another origin is refused.
      await page.evaluate(() => {
        const image = document.createElement('img');
        image.src = 'https://elsewhere.invalid/pixel.png';
        document.body.append(image);
      });
      await eventually(async () => violations.some((v) => v.includes('img-src')), 5_000, 'the img-src violation');
    } finally {
      await context.close();
    }
  });
});

describe('GraphiQL turned off', () => {
  it('answers a browser 404 with how to turn it on, never another landing page', async () => {
    const off = await svc.startAnother('off', { env: { GRAPHQL_IDE: 'false' } });
    try {
      const response = await fetch(`${off.url}/graphql`, { headers: { accept: 'text/html' } });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { detail: string }).detail).toMatch(/GRAPHQL_IDE=false/);
      expect((await fetch(`${off.url}/graphiql/config.json`)).status).toBe(404);
    } finally {
      await off.stop();
    }
  });
});
