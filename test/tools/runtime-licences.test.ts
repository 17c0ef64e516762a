/**
 * The runtime licence list (docs/runtime-licences.md, from `runtimeComponents`) names exactly what
 * the image's `npm ci --omit=dev` installs: the repository's package.json and lock installed that
 * way into an empty directory (from the npm cache), every installed package listed, and every
 * listed one installed but the optional builds for other platforms.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runtimeComponents } from '../../scripts/runtime-licences.js';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'rcs-runtime-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Every package path under `dir`'s node_modules, nested ones included (`node_modules/a/node_modules/b`). */
function installedPaths(dir: string, prefix = 'node_modules'): string[] {
  const root = join(dir, prefix);
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) => (name.startsWith('@') ? readdirSync(join(root, name)).map((inner) => `${name}/${inner}`) : [name]))
    .flatMap((name) => [`${prefix}/${name}`, ...installedPaths(dir, `${prefix}/${name}/node_modules`)]);
}

describe('the runtime licence list', () => {
  it("names what npm ci --omit=dev installs, and nothing else but other platforms' optional builds", async () => {
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(file, join(work, file));
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: work, maxBuffer: 1 << 24 });
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { optional?: boolean }> };
    const installed = new Set(installedPaths(work));
    const listed = new Set(runtimeComponents(lock as never).map((component) => component.name));
    const installedNames = new Set([...installed].map((path) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)));
    expect([...installedNames].filter((name) => !listed.has(name))).toEqual([]);
    const notInstalled = [...listed].filter((name) => !installedNames.has(name));
    expect(notInstalled.filter((name) => lock.packages[`node_modules/${name}`]?.optional !== true)).toEqual([]);
    expect(installed.size).toBeGreaterThan(300);
  }, 300_000);
});
