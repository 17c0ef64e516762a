/**
 * The client library as a user gets it: `npm pack` of packages/client (its prepack builds dist/),
 * the packed file installed with its peers into an empty project, and the package README's two
 * snippets run there against real services: the Node one as a script (Node runs the TypeScript as
 * it is), the page one bundled by esbuild from the installed package and run in Chromium. The packed
 * file must hold the built code and its declarations, and import nothing it does not declare.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incoming, storedTest } from '../log/storage-contract.js';
import { launchChromium, screenshot, servePages, type PageSite } from '../support/browser.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';

const run = promisify(execFile);
/** tsc over a fresh program, a Node process and a browser page are slow on a loaded machine: bounds that suit one. */
const SLOW_MS = 180_000;
const ROOT = process.cwd();
const PACKAGE = '@result-collection-service/client';
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A test's messages</title>
<script type="module" src="/page.js"></script></head>
<body><p id="status"></p><button id="stop">Stop</button><ol id="messages"></ol></body></html>`;

/** The README's snippet marked `<!-- tested: name ... -->`: the first ```ts block after the mark. */
function readmeSnippet(name: string): string {
  const readme = readFileSync('packages/client/README.md', 'utf8');
  const found = new RegExp(`<!-- tested: ${name}\\b[^>]*-->\\s*\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (found?.[1] === undefined) throw new Error(`packages/client/README.md has no snippet marked "tested: ${name}"`);
  return found[1];
}

/** The version of `name` the repository installed, so the empty project gets the same from the npm cache. */
const installed = (name: string) => (JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;

let work: string;
let project: string;
let packed: { filename: string; files: Array<{ path: string }> };

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'rcs-packed-'));
  project = join(work, 'app');
  mkdirSync(project);
  const { stdout } = await run('npm', ['pack', '--workspace', 'packages/client', '--pack-destination', work, '--json'], { cwd: ROOT, maxBuffer: 1 << 24 });
  // npm prints the packed files' list as JSON after what the prepack build printed, if anything.
  packed = (JSON.parse(stdout.slice(stdout.indexOf('\n[') + 1 || 0)) as Array<typeof packed>)[0] as typeof packed;
  await run('npm', ['init', '-y'], { cwd: project });
  await run('npm', ['pkg', 'set', 'type=module'], { cwd: project });
  const peers = ['graphql-ws', 'graphql-sse', 'graphql'].map((name) => `${name}@${installed(name)}`);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, packed.filename), ...peers], { cwd: project, maxBuffer: 1 << 24 });
  writeFileSync(join(project, 'follow.ts'), readmeSnippet('node'));
  writeFileSync(join(project, 'index.ts'), readmeSnippet('browser'));
}, 300_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed client library', () => {
  it('holds the built code, its declarations and the README, and imports only what it declares', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/follow-iterator.js',
        'dist/service-error-codes.d.ts',
        'dist/apollo.js',
        'dist/apollo.d.ts',
      ]),
    );
    expect(paths.filter((path) => !/^(dist|src)\/|^(package\.json|README\.md)$/.test(path))).toEqual([]);
    const root = join(project, 'node_modules', PACKAGE);
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
    const outside: string[] = [];
    const built = readdirSync(join(root, 'dist'), { recursive: true, encoding: 'utf8' }).filter((file) => /\.(js|d\.ts)$/.test(file));
    expect(built.length).toBeGreaterThan(10);
    for (const file of built) {
      for (const { fileName: specifier } of ts.preProcessFile(readFileSync(join(root, 'dist', file), 'utf8')).importedFiles) {
        if (specifier.startsWith('.')) {
          const target = resolve(root, 'dist', dirname(file), specifier);
          if (!existsSync(file.endsWith('.d.ts') ? target.replace(/\.js$/, '.d.ts') : target)) outside.push(`${file}: ${specifier} (missing)`);
          continue;
        }
        const name = specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/');
        if (!declared.has(name)) outside.push(`${file}: ${specifier}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it(
    "type-checks the README's snippets against the installed declarations",
    async () => {
      const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
      const options = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--lib', 'es2023,dom,dom.iterable'];
      const types = ['--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types')];
      const checked = await run(process.execPath, [tsc, ...options, ...types, 'follow.ts', 'index.ts'], { cwd: project }).then(
        () => '',
        (error: { stdout?: string }) => error.stdout ?? String(error),
      );
      expect(checked).toBe('');
    },
    SLOW_MS,
  );
});

describe("the README's Node snippet, run from the installed package", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startPipelineService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it(
    'follows a real test to its end: every message once, in order, stored then live',
    async () => {
      const id = await storedTest(svc.log, 'packed-node', [{ sequence: 1 }, { sequence: 2 }]);
      const child = spawn(process.execPath, ['follow.ts', id], {
        cwd: project,
        env: { ...process.env, RCS_URL: svc.url, RCS_TOKEN: await defaultToken() },
      });
      let out = '';
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const exited = new Promise<number | null>((done) => child.on('exit', done));
      const twoLines = new Promise<void>((enough) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.split('\n').length > 2) enough();
        });
      });
      await Promise.race([twoLines, exited.then((code) => Promise.reject(new Error(`the script exited (${code}) before two messages: ${err}`)))]);
      await svc.log.append([incoming(id, { sequence: 3 })]);
      await svc.log.append([incoming(id, { sequence: 4, final: true })]);
      expect(await exited, err).toBe(0);
      const lines = out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { sequence: number; final: boolean; payload: unknown });
      expect(lines.map((line) => line.sequence)).toEqual([1, 2, 3, 4]);
      expect(lines.map((line) => line.final)).toEqual([false, false, false, true]);
      expect(lines[0]?.payload).toEqual({ n: 1 });
    },
    SLOW_MS,
  );
});

describe("the README's page snippet, bundled from the installed package, in Chromium", () => {
  let svc: TestService;
  let site: PageSite;
  let browser: Browser;
  beforeAll(async () => {
    const bundle = await build({
      entryPoints: ['index.ts'],
      absWorkingDir: project,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
    });
    const token = await defaultToken();
    site = await servePages({
      '/': { type: 'text/html; charset=utf-8', body: PAGE },
      '/page.js': { type: 'text/javascript', body: bundle.outputFiles[0]?.text ?? '' },
      '/token': { type: 'text/plain', body: token },
    });
    svc = await startPipelineService({ env: { CORS_ALLOWED_ORIGINS: site.origin } });
    browser = await launchChromium();
  }, SLOW_MS);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await site?.close();
  });

  it.each(['ws', 'sse'] as const)(
    'follows a real test over %s to its end, every message once and in order',
    async (transport) => {
      const id = await storedTest(svc.log, `packed-page-${transport}`, [{ sequence: 1, status: 'RUNNING' }, { sequence: 2 }]);
      const page = await browser.newPage();
      try {
        await page.goto(`${site.origin}/?${new URLSearchParams({ test: id, service: svc.url, transport }).toString()}`);
        await page.waitForFunction(() => document.querySelectorAll('#messages li').length >= 2, undefined, { timeout: 60_000 });
        await svc.log.append([incoming(id, { sequence: 3, final: true, status: 'COMPLETED' })]);
        await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'completed', undefined, { timeout: 60_000 });
        const items = await page.locator('#messages li').allTextContents();
        await screenshot(page, `packed-client-${transport}`);
        expect(items.map((item) => item.split(' ')[0])).toEqual(['1', '2', '3']);
      } finally {
        await page.close();
      }
    },
    SLOW_MS,
  );
});
