/**
 * docs/clients.md, run as written: each snippet marked `<!-- tested: name -->` is written to a
 * module of its own and imported from there, and the client it makes starts a test, reads it, and
 * follows it to its final message through a TCP proxy that drops the connection once mid-stream:
 * every message once, in order. The Apollo Client and urql snippets do the same bundled into a page
 * in Chromium. The codegen config generates types from the running service with its token, and
 * fails without one.
 */
import { gql, type ApolloClient } from '@apollo/client';
import type { Client as UrqlClient } from '@urql/core';
import type { Client as SseClient } from 'graphql-sse';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Environment, RequestParameters } from 'relay-runtime';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incoming, storedTest } from '../log/storage-contract.js';
import { launchChromium, screenshot, servePages, type PageSite } from '../support/browser.js';
import { eventually, postGraphQL } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { defaultToken } from '../support/tokens.js';

const run = promisify(execFile);
const WORK = resolve('.cache/clients-page');
const START = 'mutation Start($input: StartTestInput) { startTest(input: $input) { correlationId } }';
const STATUS = 'query Status($id: ID!) { test(correlationId: $id) { status messageCount } }';
const FOLLOW = 'subscription Follow($id: ID!, $after: String) { testMessages(correlationId: $id, after: $after) { cursor sequence final payload } }';

/** The snippet of docs/clients.md marked `<!-- tested: name -->`: the first ```ts block after the mark. */
function snippet(name: string): string {
  const page = readFileSync('docs/clients.md', 'utf8');
  const found = new RegExp(`<!-- tested: ${name} -->\\s*\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(page);
  if (found?.[1] === undefined) throw new Error(`docs/clients.md has no snippet marked "tested: ${name}"`);
  return found[1];
}

/** The snippet `name` as a module, imported: what a user pasting it gets. */
async function load<T>(name: string): Promise<T> {
  const file = join(WORK, `${name}.ts`);
  writeFileSync(file, snippet(name));
  return (await import(file)) as T;
}

let svc: TestService;
let proxy: TcpProxy;
let token: string;

beforeAll(async () => {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  svc = await startPipelineService();
  proxy = await startTcpProxy(svc.url);
  token = await defaultToken();
});

afterAll(async () => {
  await proxy?.close();
  await svc?.stop();
});

type Sequence = number | null;

/** One client as the page sets it up: start, read, follow (`onMessage` gets each message's sequence). */
interface PageClient {
  start(): Promise<string>;
  status(id: string): Promise<string>;
  follow(id: string, onMessage: (sequence: Sequence) => void): () => void;
  dispose(): unknown;
}

const apolloAdapter = (client: ApolloClient, dispose: () => unknown = () => undefined): PageClient => ({
  start: async () =>
    (await client.mutate<{ startTest: { correlationId: string } }>({ mutation: gql(START), variables: { input: { name: 'clients page' } } })).data!.startTest
      .correlationId,
  status: async (id) =>
    (await client.query<{ test: { status: string } }>({ query: gql(STATUS), variables: { id }, fetchPolicy: 'network-only' })).data!.test.status,
  follow: (id, onMessage) => {
    const subscription = client.subscribe<{ testMessages: { sequence: Sequence } }>({ query: gql(FOLLOW), variables: { id } }).subscribe({
      next: (result) => result.data && onMessage(result.data.testMessages.sequence),
    });
    return () => subscription.unsubscribe();
  },
  dispose: () => {
    client.stop();
    return dispose();
  },
});

/** One operation over a graphql-ws/graphql-sse-shaped client: its first result's data. */
const once = <T>(
  client: { subscribe(payload: { query: string; variables?: Record<string, unknown> }, sink: object): () => void },
  query: string,
  variables: Record<string, unknown>,
) =>
  new Promise<T>((resolvePromise, reject) => {
    client.subscribe(
      { query, variables },
      {
        next: (result: { data?: T; errors?: unknown }) => (result.data ? resolvePromise(result.data) : reject(new Error(JSON.stringify(result.errors)))),
        error: reject,
        complete: () => undefined,
      },
    );
  });

const clients: Record<string, () => Promise<PageClient>> = {
  apollo: async () => {
    const { createApolloClient } = await load<{ createApolloClient(url: string, token: string): ApolloClient }>('apollo');
    return apolloAdapter(createApolloClient(proxy.url, token));
  },
  'apollo-ws': async () => {
    const { createApolloWsClient } = await load<{ createApolloWsClient(url: string, token: string): ApolloClient }>('apollo-ws');
    return apolloAdapter(createApolloWsClient(proxy.url, token));
  },
  urql: async () => {
    const { createUrqlClient } = await load<{ createUrqlClient(url: string, token: string): UrqlClient }>('urql');
    const client = createUrqlClient(proxy.url, token);
    return {
      start: async () =>
        ((await client.mutation(START, { input: { name: 'clients page' } }).toPromise()).data as { startTest: { correlationId: string } }).startTest
          .correlationId,
      status: async (id) =>
        ((await client.query(STATUS, { id }, { requestPolicy: 'network-only' }).toPromise()).data as { test: { status: string } }).test.status,
      follow: (id, onMessage) => {
        // urql marks a subscription's end with one more result, `hasNext: false`, repeating the last data.
        const { unsubscribe } = client.subscription(FOLLOW, { id }).subscribe((result) => {
          const message = (result.data as { testMessages?: { sequence: Sequence } } | undefined)?.testMessages;
          if (message !== undefined && result.hasNext) onMessage(message.sequence);
        });
        return unsubscribe;
      },
      dispose: () => undefined,
    };
  },
  relay: async () => {
    const { createRelayEnvironment } = await load<{ createRelayEnvironment(url: string, token: string): Environment }>('relay');
    const network = createRelayEnvironment(proxy.url, token).getNetwork();
    const params = (text: string, operationKind: RequestParameters['operationKind']): RequestParameters =>
      ({ id: null, text, name: /^\w+ (\w+)/.exec(text)![1]!, operationKind, cacheID: text, metadata: {} }) as RequestParameters;
    const data = async <T>(text: string, kind: RequestParameters['operationKind'], variables: Record<string, unknown>) =>
      ((await network.execute(params(text, kind), variables, {}).toPromise()) as { data: T }).data;
    return {
      start: async () => (await data<{ startTest: { correlationId: string } }>(START, 'mutation', { input: { name: 'clients page' } })).startTest.correlationId,
      status: async (id) => (await data<{ test: { status: string } }>(STATUS, 'query', { id })).test.status,
      follow: (id, onMessage) => {
        const subscription = network.execute(params(FOLLOW, 'subscription'), { id }, {}).subscribe({
          next: (response) => onMessage((response as { data: { testMessages: { sequence: Sequence } } }).data.testMessages.sequence),
        });
        return () => subscription.unsubscribe();
      },
      dispose: () => undefined,
    };
  },
  'graphql-sse': async () => {
    const { createSseClient } = await load<{ createSseClient(url: string, token: string): SseClient }>('graphql-sse');
    const client = createSseClient(proxy.url, token);
    return {
      start: async () => (await once<{ startTest: { correlationId: string } }>(client, START, { input: { name: 'clients page' } })).startTest.correlationId,
      status: async (id) => (await once<{ test: { status: string } }>(client, STATUS, { id })).test.status,
      follow: (id, onMessage) =>
        client.subscribe(
          { query: FOLLOW, variables: { id } },
          {
            next: (result) => onMessage((result.data as { testMessages: { sequence: Sequence } }).testMessages.sequence),
            error: () => undefined,
            complete: () => undefined,
          },
        ),
      dispose: () => client.dispose(),
    };
  },
};

describe.each(Object.keys(clients))('docs/clients.md: %s', (name) => {
  it('starts a test, reads it, and follows it through a dropped connection: every message once, in order', async () => {
    const client = await clients[name]!();
    try {
      const id = await client.start();
      const direct = await postGraphQL<{ test: { status: string } }>(svc.url, STATUS, { id });
      expect(await client.status(id)).toBe(direct.body.data?.test.status);
      await svc.log.append([incoming(id, { sequence: 1 })]);
      const sequences: Sequence[] = [];
      const stop = client.follow(id, (sequence) => sequences.push(sequence));
      try {
        await eventually(() => sequences.length >= 1, 20_000, 'the stored message');
        proxy.cut();
        await svc.log.append([incoming(id, { sequence: 2 })]);
        await eventually(() => sequences.includes(2), 30_000, 'the message sent during the drop');
        await svc.log.append([incoming(id, { sequence: 3, final: true })]);
        await eventually(() => sequences.includes(3), 20_000, 'the final message');
      } finally {
        stop();
      }
      expect(sequences).toEqual([1, 2, 3]);
    } finally {
      await client.dispose();
    }
  }, 90_000);
});

describe('docs/clients.md: the codegen config', () => {
  const project = join(WORK, 'codegen');
  /** The user's project's own folders, where the config looks: its sources and the generated types. */
  const sources = join(project, 'src');
  const generated = join(sources, 'gql');
  const codegen = (env: Record<string, string>) =>
    run(resolve('node_modules/.bin/graphql-codegen'), ['--config', 'codegen.ts'], { cwd: project, env: { ...process.env, ...env }, maxBuffer: 1 << 24 });

  beforeAll(() => {
    mkdirSync(sources, { recursive: true });
    writeFileSync(join(project, 'codegen.ts'), snippet('codegen'));
    writeFileSync(join(sources, 'status.ts'), `import { graphql } from './gql';\nexport const Status = graphql(\`${STATUS}\`);\n`);
  });

  it('generates typed operations from the running service with the token, and is refused without one', async () => {
    await codegen({ RCS_URL: svc.url, RCS_TOKEN: token });
    expect(readFileSync(join(generated, 'graphql.ts'), 'utf8')).toMatch(/export type StatusQuery = /);
    rmSync(generated, { recursive: true });
    // Introspection needs a token: with a bad one the service answers 401 and codegen exits non-zero, writing nothing.
    await expect(codegen({ RCS_URL: svc.url, RCS_TOKEN: 'not-a-token' })).rejects.toThrow(/Command failed/);
    expect(existsSync(join(generated, 'graphql.ts'))).toBe(false);
  }, 120_000);
});

/** A page that follows `?test=` at `?service=` with the snippet's client `?client=` (apollo or urql), listing each message's sequence. */
const DRIVER = `
import { gql } from '@apollo/client';
import { createApolloClient } from './apollo.ts';
import { createUrqlClient } from './urql.ts';

const params = new URLSearchParams(location.search);
const [url, id] = [params.get('service') ?? '', params.get('test') ?? ''];
const token = await (await fetch('/token')).text();
const list = document.querySelector('#messages');
const show = (sequence) => list.insertAdjacentHTML('beforeend', '<li>' + sequence + '</li>');
const ended = () => (document.querySelector('#status').textContent = 'completed');
const FOLLOW = ${JSON.stringify(FOLLOW)};
if (params.get('client') === 'apollo') {
  createApolloClient(url, token).subscribe({ query: gql(FOLLOW), variables: { id } }).subscribe({
    next: (result) => result.data && show(result.data.testMessages.sequence),
    complete: ended,
  });
} else {
  createUrqlClient(url, token).subscription(FOLLOW, { id }).subscribe((result) => {
    if (result.data && result.hasNext) show(result.data.testMessages.sequence);
    if (result.hasNext === false) ended();
  });
}
`;

describe('docs/clients.md in Chromium: the snippets bundled into a page', () => {
  let page: PageSite;
  let browser: Browser;
  let service: TestService;
  let carried: TcpProxy;
  beforeAll(async () => {
    for (const name of ['apollo', 'urql']) writeFileSync(join(WORK, `${name}.ts`), snippet(name));
    writeFileSync(join(WORK, 'driver.js'), DRIVER);
    const bundle = await build({
      entryPoints: [join(WORK, 'driver.js')],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      conditions: ['@result-collection-service/source'],
      define: { 'process.env.NODE_ENV': '"production"' },
      write: false,
    });
    page = await servePages({
      '/': {
        type: 'text/html; charset=utf-8',
        body: '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Follow</title><script type="module" src="/page.js"></script></head><body><p id="status"></p><ol id="messages"></ol></body></html>',
      },
      '/page.js': { type: 'text/javascript', body: bundle.outputFiles[0]?.text ?? '' },
      '/token': { type: 'text/plain', body: await defaultToken() },
    });
    service = await startPipelineService({ env: { CORS_ALLOWED_ORIGINS: page.origin } });
    carried = await startTcpProxy(service.url);
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await carried?.close();
    await service?.stop();
    await page?.close();
  });

  it.each(['apollo', 'urql'])(
    '%s follows a test through a dropped connection: every message once, in order',
    async (client) => {
      const id = await storedTest(service.log, `clients-page-${client}`, [{ sequence: 1 }]);
      const tab = await browser.newPage();
      try {
        await tab.goto(`${page.origin}/?${new URLSearchParams({ test: id, service: carried.url, client }).toString()}`);
        await tab.waitForFunction(() => document.querySelectorAll('#messages li').length >= 1, undefined, { timeout: 60_000 });
        carried.cut();
        await service.log.append([incoming(id, { sequence: 2 })]);
        await tab.waitForFunction(() => document.querySelectorAll('#messages li').length >= 2, undefined, { timeout: 60_000 });
        await service.log.append([incoming(id, { sequence: 3, final: true })]);
        await tab.waitForFunction(() => document.querySelector('#status')?.textContent === 'completed', undefined, { timeout: 60_000 });
        await screenshot(tab, `clients-page-${client}`);
        expect(await tab.locator('#messages li').allTextContents()).toEqual(['1', '2', '3']);
      } finally {
        await tab.close();
      }
    },
    180_000,
  );
});
