/**
 * The fixture of the browser suites: a service on a mock cluster of its own, optionally with the
 * embedded issuer (one public client, one user) and the simulator answering start requests, and
 * headless Chromium to drive it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { hashPassword } from '../../src/auth/credentials.js';
import { createSimulator } from '../../tools/simulator/simulator.js';
import { launchChromium } from './browser.js';
import { startMockClusterService, type MockClusterService, type MockClusterServiceOptions } from './mock-service.js';
import { freePort } from './service.js';

/** A user of the embedded issuer, who signs in on its login page. */
export interface BrowserUser {
  readonly username: string;
  readonly password: string;
  readonly sub: string;
  readonly name: string;
}

/** What runs besides the service. */
export interface BrowserServiceOptions extends Pick<MockClusterServiceOptions, 'env' | 'wrapLog'> {
  /** Names the topics and the issuer's temporary folder. */
  readonly label: string;
  /**
   * The embedded issuer, with one public client (code + PKCE, refresh tokens) whose redirect URI
   * is `redirectPath` on the service's own origin, and one user.
   */
  readonly issuer?: { readonly clientId: string; readonly redirectPath: string; readonly user: BrowserUser };
  /** Runs the simulator, which answers each start request with a run of results. */
  readonly simulator?: boolean;
}

/** The running fixture; `stop()` stops everything it started. */
export interface BrowserService {
  readonly svc: MockClusterService;
  readonly browser: Browser;
  stop(): Promise<void>;
}

/** Starts the service (ready: its consumer joined its group), then the simulator and Chromium. */
export async function startBrowserService(options: BrowserServiceOptions): Promise<BrowserService> {
  // Undone in reverse order, also when a later step fails.
  const cleanups: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  const { label, issuer, simulator: simulated, ...serviceOptions } = options;
  try {
    const issuerEnv = issuer ? await writeIssuerFiles(label, issuer, cleanups) : {};
    const svc = await startMockClusterService(label, { ...serviceOptions, embeddedIssuer: issuer !== undefined, env: { ...issuerEnv, ...serviceOptions.env } });
    cleanups.push(() => svc.stop());
    await svc.ready();
    if (simulated) {
      const { topics } = svc;
      const simulator = createSimulator({
        brokers: svc.cluster.bootstrapServers,
        requestsTopic: topics.requests,
        resultsTopic: topics.results,
        groupId: `${topics.group}-sim`,
        duplicateEvery: 0,
        swapEvery: 0,
      });
      cleanups.push(() => simulator.dispose());
      await simulator.start();
    }
    const browser = await launchChromium();
    cleanups.push(() => browser.close());
    return { svc, browser, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Writes the issuer's clients and users files to a temporary folder; returns the settings naming
 * them and the port and public URL the service must take, on which the redirect URI depends.
 */
async function writeIssuerFiles(
  label: string,
  issuer: NonNullable<BrowserServiceOptions['issuer']>,
  cleanups: Array<() => Promise<unknown>>,
): Promise<Record<string, string>> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const dir = await mkdtemp(join(tmpdir(), `${label}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const { user } = issuer;
  const clients = [
    {
      client_id: issuer.clientId,
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [`${origin}${issuer.redirectPath}`],
      token_endpoint_auth_method: 'none',
    },
  ];
  const users = [{ username: user.username, password_hash: await hashPassword(user.password), sub: user.sub, name: user.name }];
  await writeFile(join(dir, 'clients.json'), JSON.stringify(clients));
  await writeFile(join(dir, 'users.json'), JSON.stringify(users));
  return { PORT: String(port), PUBLIC_URL: origin, OIDC_CLIENTS_FILE: join(dir, 'clients.json'), OIDC_USERS_FILE: join(dir, 'users.json') };
}

/**
 * Signs `user` in on the issuer's login page the browser stands on, then waits until the app it
 * returns to shows them signed in, with the authorization response gone from its URL.
 */
export async function signInOnLoginPage(page: Page, user: BrowserUser): Promise<void> {
  await page.locator('input[name="username"]').fill(user.username);
  await page.locator('input[name="password"]').fill(user.password);
  await page.locator('input[name="password"]').press('Enter');
  await page.getByTestId('signed-in').waitFor();
  expect(await page.getByTestId('signed-in').innerText()).toBe(`Signed in as ${user.name}`);
  expect(new URL(page.url()).search).toBe('');
}
