/**
 * A real browser for tests: Debian's Chromium (installed by scripts/setup.sh) driven by
 * playwright-core, which never downloads a browser of its own. Screenshots go to
 * test-results/screenshots/ (git-ignored) for people to look at.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

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
