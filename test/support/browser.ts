/// <reference lib="dom" />
/**
 * A real browser for tests: Debian's Chromium (installed by scripts/setup.sh) driven by
 * playwright-core, which never downloads a browser of its own. Screenshots go to
 * test-results/screenshots/ (git-ignored) for people to look at.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Launches headless Chromium; fails with what to run when it is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no Chromium at ${CHROMIUM_PATH}: run scripts/setup.sh, which installs Debian's chromium package`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // --no-sandbox: CI and containers run as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
  });
}

/** Saves a full-page screenshot as test-results/screenshots/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const path = `${dir}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A tiny static site on its own origin (`http://127.0.0.1:<port>`), for cross-origin pages. */
export interface PageSite {
  readonly origin: string;
  close(): Promise<void>;
}

/** Serves `files` (path → content type and body) on a free loopback port. */
export async function servePages(files: Readonly<Record<string, { type: string; body: string | Buffer }>>): Promise<PageSite> {
  const server: Server = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://x').pathname];
    if (file === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An HTML page the browser loaded, with its security headers. */
export interface HtmlPage {
  readonly path: string;
  readonly csp: string | undefined;
  readonly nosniff: string | undefined;
}

/** A context under watch: what its pages requested, opened and loaded, and what the CSP refused. */
export interface RecordingContext {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Every request's URL. */
  readonly urls: string[];
  /** Every WebSocket's URL. */
  readonly sockets: string[];
  /** The Authorization header of every `POST /graphql`. */
  readonly graphqlAuth: string[];
  readonly htmlPages: HtmlPage[];
  readonly violations: string[];
}

/**
 * A fresh browser context that records every request and WebSocket its pages open, the HTML
 * pages it loads, and every Content-Security-Policy violation the browser reports (the
 * `securitypolicyviolation` event, and Chromium's console message for what the event misses).
 */
export async function recordingContext(browser: Browser): Promise<RecordingContext> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const urls: string[] = [];
  const sockets: string[] = [];
  const graphqlAuth: string[] = [];
  const htmlPages: HtmlPage[] = [];
  const violations: string[] = [];
  context.on('request', (request) => {
    urls.push(request.url());
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/graphql') graphqlAuth.push(request.headers().authorization ?? '');
  });
  context.on('response', (response) => {
    const headers = response.headers();
    if (!(headers['content-type'] ?? '').startsWith('text/html')) return;
    htmlPages.push({ path: new URL(response.url()).pathname, csp: headers['content-security-policy'], nosniff: headers['x-content-type-options'] });
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (/CSP violation|Content Security Policy/.test(message.text())) violations.push(message.text());
  });
  // Fail a step with its own message well before the test's timeout.
  page.setDefaultTimeout(20_000);
  page.on('websocket', (socket) => sockets.push(socket.url()));
  return { context, page, urls, sockets, graphqlAuth, htmlPages, violations };
}

/**
 * Runs `steps` in a recorded context; when they fail, keeps a screenshot `<failureShot>.png` of
 * where the page stood; closes the context either way.
 */
export async function inContext<C extends Pick<RecordingContext, 'context' | 'page'>>(
  recorded: C,
  failureShot: string,
  steps: (recorded: C) => Promise<void>,
): Promise<void> {
  try {
    await steps(recorded);
  } catch (error) {
    await screenshot(recorded.page, failureShot).catch(() => undefined);
    throw error;
  } finally {
    await recorded.context.close();
  }
}

/** Requests and sockets that left `origin` (data: URLs aside). */
export function foreignUrls(recorded: Pick<RecordingContext, 'urls' | 'sockets'>, origin: string): string[] {
  const own = new URL(origin);
  return [...recorded.urls, ...recorded.sockets].filter((url) => !url.startsWith('data:') && new URL(url).host !== own.host);
}
