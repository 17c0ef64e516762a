/**
 * The GraphQL schema against the last released one (scripts/check-schema.ts, run in CI): the
 * schema served now breaks nothing of the release within its major version; a removed field, a
 * changed type or a new required argument fails unless the major version is above the released
 * one; additions and deprecations pass. The versions of the service and the client library are
 * semantic versions, and the changelog has an entry for the service's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { compareSchemas, currentSdl, lastReleased } from '../../scripts/check-schema.js';

const root = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const version = (file: string) => (JSON.parse(read(file)) as { version: string }).version;
const released = lastReleased();

/** The current schema with the text `line` matches replaced. */
function edited(line: RegExp, replacement: string): string {
  const sdl = currentSdl();
  expect(sdl).toMatch(line);
  return sdl.replace(line, replacement);
}

describe('the GraphQL schema against the last released one', () => {
  it(`breaks nothing of ${released.version} at the service's version`, async () => {
    const verdict = await compareSchemas(released, currentSdl(), version('package.json'));
    expect(verdict.problems).toEqual([]);
  });

  it('fails on a removed field, a changed field type and a new required argument within the major version', async () => {
    const removed = await compareSchemas(released, edited(/^ {2}"How many distinct[^\n]*\n {2}messageCount: Int!\n/m, ''), released.version);
    expect(removed.problems.join('\n')).toMatch(/breaking change without a major version above .*messageCount/);
    const retyped = await compareSchemas(released, edited(/^ {2}messageCount: Int!$/m, '  messageCount: String!'), semver.inc(released.version, 'minor')!);
    expect(retyped.problems.join('\n')).toMatch(/messageCount/);
    const required = await compareSchemas(
      released,
      edited(/^ {2}messageCount: Int!$/m, '  messageCount(since: Int!): Int!'),
      semver.inc(released.version, 'patch')!,
    );
    expect(required.problems.join('\n')).toMatch(/since/);
  });

  it('lets the next major version break, and any version add or deprecate', async () => {
    const removal = edited(/^ {2}"How many distinct[^\n]*\n {2}messageCount: Int!\n/m, '');
    const major = await compareSchemas(released, removal, semver.inc(released.version, 'major')!);
    expect(major.breaking.length).toBeGreaterThan(0);
    expect(major.problems).toEqual([]);
    const deprecated = edited(/^ {2}messageCount: Int!$/m, '  messageCount: Int! @deprecated(reason: "Use messages.totalCount.")\n  count: Int!');
    const minor = await compareSchemas(released, deprecated, semver.inc(released.version, 'minor')!);
    expect(minor.breaking).toEqual([]);
    expect(minor.problems).toEqual([]);
  });

  it('refuses a version below the released one', async () => {
    const verdict = await compareSchemas(released, currentSdl(), '0.9.0');
    expect(verdict.problems).toContain(`version 0.9.0 is below the released ${released.version}`);
  });
});

describe('versions', () => {
  it('are semantic versions, the service at or above its last released schema, with a changelog entry', () => {
    const service = version('package.json');
    expect(semver.valid(service)).toBe(service);
    expect(semver.valid(version('packages/client/package.json'))).toBe(version('packages/client/package.json'));
    expect(semver.gte(service, released.version)).toBe(true);
    expect(read('CHANGELOG.md')).toMatch(new RegExp(`^## \\[${service.replaceAll('.', '\\.')}\\]`, 'm'));
  });
});
