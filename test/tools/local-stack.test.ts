/**
 * The local stack as a developer runs it (`scripts/dev.sh`, which runs scripts/local-stack.ts): on
 * the mock cluster by default and on a real Kafka node with --kafka, a token from the printed
 * command's client, the printed GraphiQL and dashboard URLs served, the dashboard's sign-in
 * working for the demo user, a started test runs to COMPLETED through the simulated external system, and
 * Ctrl-C (SIGINT) stops the service before the broker and exits 0.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { eventually } from '../support/graphql.js';
import { CookieJar, browse } from '../support/oauth-browser.js';
import { freePort } from '../support/service.js';

async function token(url: string): Promise<string> {
  const clients = JSON.parse(readFileSync(new URL('../../.cache/dev/clients.json', import.meta.url), 'utf8')) as Array<{
    client_id: string;
    client_secret?: string;
  }>;
  const secret = clients.find((c) => c.client_id === 'demo')?.client_secret as string;
  const response = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`demo:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&scope=tests%3Aread%20tests%3Awrite',
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** The dashboard's sign-in as the printed URL starts it: code + PKCE for client demo-web, back to /dashboard/. */
async function dashboardSignIn(url: string): Promise<client.TokenEndpointResponse> {
  const redirectUri = `${url}/dashboard/`;
  const config = await client.discovery(new URL(url), 'demo-web', undefined, client.None(), { execute: [client.allowInsecureRequests] });
  const verifier = client.randomPKCECodeVerifier();
  const start = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid profile tests:read tests:write',
    state: 's',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const { callback } = await browse(new CookieJar(), start, { issuer: url, redirectUri, user: { username: 'demo', password: 'demo-password' } });
  if (callback === undefined) throw new Error('the sign-in never came back to the dashboard');
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's' });
}

describe.each([
  { name: 'mock cluster (default)', args: [] as string[] },
  { name: 'real Kafka (--kafka)', args: ['--kafka'] },
])('local stack on the $name', ({ args }) => {
  it('starts, runs a test to COMPLETED, and stops on Ctrl-C with the service first', { timeout: 180_000 }, async () => {
    const port = await freePort();
    const stack = spawn(process.execPath, ['--import', 'tsx', 'scripts/local-stack.ts', ...args], {
      env: { ...process.env, PORT: String(port), LOG_LEVEL: 'info', KAFKA_BROKERS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    stack.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    stack.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(stack, 'exit') as Promise<[number | null]>;
    let atCtrlC: number;
    try {
      await eventually(() => output.includes('Result Collection Service is running.'), 120_000, 'the stack to print its banner');
      const url = `http://localhost:${port}`;
      expect(output).toContain(`${url}/graphql`);
      expect(output).toMatch(new RegExp(`GraphiQL \\(open in a browser\\) +${url}/graphql\n`));
      expect(output).toContain(`${url}/graphql?sign-in`);
      // The banner's token command, run as written (it names the stack's address; the README's, without
      // one, asks port 4000's).
      expect(output).toContain(`export TOKEN=$(npm run --silent token -- ${url})`);
      const printed = await promisify(execFile)('bash', ['-c', `npm run --silent token -- ${url}`], { env: { ...process.env } });
      expect(printed.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
      const viaHelper = await fetch(`${url}/tests/none`, { headers: { authorization: `Bearer ${printed.stdout.trim()}` } });
      expect(viaHelper.status).toBe(404);
      // GraphiQL is served to a browser without a token, with sign-in through the demo browser client.
      const page = await fetch(`${url}/graphql`, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(await (await fetch(`${url}/graphiql/config.json`)).json()).toMatchObject({ signIn: { clientId: 'demo-web' } });
      // The dashboard too, and the banner's sign-in works: the demo user signs in through the
      // login page with code + PKCE and is sent back to the dashboard, which gets a refresh token.
      expect(output).toMatch(new RegExp(`Dashboard \\(open in a browser\\) +${url}/dashboard/\n`));
      expect(output).toContain(`${url}/dashboard/?sign-in`);
      expect((await fetch(`${url}/dashboard/`)).status).toBe(200);
      expect(await (await fetch(`${url}/dashboard/config.json`)).json()).toMatchObject({ signIn: { clientId: 'demo-web' } });
      expect(await dashboardSignIn(url)).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String) });
      const auth = { authorization: `Bearer ${await token(url)}` };
      const started = await fetch(`${url}/tests`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'local stack' }),
      });
      expect(started.status).toBe(202);
      const { correlationId } = (await started.json()) as { correlationId: string };
      const done = await eventually(
        async () => {
          const test = (await (await fetch(`${url}/tests/${correlationId}`, { headers: auth })).json()) as { status: string; messageCount: number };
          return test.status === 'COMPLETED' ? test : undefined;
        },
        60_000,
        'the simulated external system to complete the test',
      );
      expect(done.messageCount).toBeGreaterThan(0);
    } finally {
      atCtrlC = output.length;
      stack.kill('SIGINT');
    }
    const [code] = await exited;
    expect(code).toBe(0);
    // The service stopped cleanly (committing on the way out) while the broker was still up: had
    // the broker gone first, its consumer and producer would log connection errors on the way out.
    const shutdown = output.slice(atCtrlC);
    expect(shutdown).toMatch(/"msg":"stopped"/);
    expect(shutdown).not.toMatch(/ECONNREFUSED|Connection error|service exited with code/);
  });
});
