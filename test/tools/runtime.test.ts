/**
 * The runtime the project names once (.node-version) is the one these tests run on, the one the
 * Docker image ships, and one `package.json` `engines` admits; that range is honest (every release
 * it admits is admitted by every locked package, so `npm ci` prints no engine warning on it); and
 * the embedded issuer starts without oidc-provider's runtime warning.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { isLtsLine } from '../../src/auth/lts-line-notice.js';
import { runModuleScript } from '../support/module-script.js';

const root = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const shipped = read('.node-version').trim();
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;

describe('the Node.js line', () => {
  it(`runs the tests on the shipped line (.node-version ${shipped}, running ${process.version})`, () => {
    expect(semver.valid(shipped)).toBe(shipped);
    expect(semver.major(process.versions.node)).toBe(semver.major(shipped));
    expect(semver.gte(process.versions.node, shipped)).toBe(true);
  });

  it("is the Docker image's NODE_VERSION", () => {
    const arg = /^ARG NODE_VERSION=(\S+)$/m.exec(read('Dockerfile'));
    expect(arg?.[1]).toBe(shipped);
  });

  it('is admitted by package.json engines, whose floor is 22.12 or later', () => {
    expect(semver.satisfies(shipped, engines)).toBe(true);
    expect(semver.minVersion(engines)?.version).toBe('22.22.2');
    expect(semver.satisfies('22.12.0', engines)).toBe(false);
    expect(semver.satisfies('20.19.0', engines)).toBe(false);
  });

  it('admits no release that a locked package refuses (no EBADENGINE on any admitted release)', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } | string[] }> };
    const ranges = Object.entries(lock.packages)
      .map(([path, entry]) => [path, Array.isArray(entry.engines) ? undefined : entry.engines?.node] as const)
      .filter((pair): pair is readonly [string, string] => pair[0] !== '' && pair[1] !== undefined);
    expect(ranges.length).toBeGreaterThan(100);
    expect(ranges.filter(([, range]) => !semver.subset(engines, range))).toEqual([]);
  });
});

describe("oidc-provider's runtime check", () => {
  it('counts even lines from 22 on as LTS lines, and nothing else', () => {
    expect(['22.22.2', '24.15.0', '26.10.0', '28.0.0'].map(isLtsLine)).toEqual([true, true, true, true]);
    expect(['20.19.0', '23.1.0', '25.0.0', '27.2.0', 'x'].map(isLtsLine)).toEqual([false, false, false, false, false]);
  });

  it('prints no warning when the issuer is loaded on the shipped line, and leaves console.warn working', async () => {
    const script = "await import('./src/auth/oidc-provider.ts'); console.warn('warn still prints');";
    const { stderr } = await runModuleScript(script);
    expect(stderr).not.toContain('Unsupported runtime');
    expect(stderr).toContain('warn still prints');
  });
});
