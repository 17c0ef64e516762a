/**
 * Checks the GraphQL schema (schema/*.graphql) against the last released one
 * (schema/released/<version>.graphql, the highest version there) with @graphql-inspector/core: a
 * breaking change (a field, type, argument or enum value removed, a type changed, an argument made
 * required...) fails unless package.json's major version is above the released one's, as Semantic
 * Versioning asks. Dangerous changes (a value added to an enum a client may switch over, a default
 * changed) are printed and pass. docs/api.md, "Versioning", states the rule.
 *
 *   npx tsx scripts/check-schema.ts
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import { buildSchema } from 'graphql';
import semver from 'semver';

const root = join(import.meta.dirname, '..');

/** The SDL of the schema the service serves: every file of schema/, as the service reads them. */
export function currentSdl(): string {
  const dir = join(root, 'schema');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.graphql'))
    .sort()
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('\n');
}

/** The last released schema: its version and SDL (the highest version in schema/released/). */
export function lastReleased(): { version: string; sdl: string } {
  const dir = join(root, 'schema', 'released');
  const versions = readdirSync(dir)
    .map((name) => /^(.+)\.graphql$/.exec(name)?.[1])
    .filter((version): version is string => version !== undefined && semver.valid(version) === version)
    .sort(semver.compare);
  const version = versions.at(-1);
  if (version === undefined) throw new Error('schema/released/ holds no <version>.graphql');
  return { version, sdl: readFileSync(join(dir, `${version}.graphql`), 'utf8') };
}

/** The verdict of one comparison: the breaking and dangerous changes, and whether the version allows them. */
export interface SchemaVerdict {
  readonly breaking: readonly Change[];
  readonly dangerous: readonly Change[];
  /** Whether the version being prepared may carry the breaking changes (its major is above the released one's). */
  readonly allowed: boolean;
  readonly problems: readonly string[];
}

/**
 * Compares a schema with a released one for a given version of the service: breaking changes are
 * allowed only when `version`'s major is above `releasedVersion`'s; `version` below the released
 * one is a problem too.
 */
export async function compareSchemas(released: { version: string; sdl: string }, sdl: string, version: string): Promise<SchemaVerdict> {
  const changes = await diff(buildSchema(released.sdl), buildSchema(sdl));
  const breaking = changes.filter((change) => change.criticality.level === CriticalityLevel.Breaking);
  const dangerous = changes.filter((change) => change.criticality.level === CriticalityLevel.Dangerous);
  const allowed = semver.major(version) > semver.major(released.version);
  const problems: string[] = [];
  if (semver.lt(version, released.version)) problems.push(`version ${version} is below the released ${released.version}`);
  if (!allowed) {
    for (const change of breaking) problems.push(`breaking change without a major version above ${released.version}: ${change.message}`);
  }
  return { breaking, dangerous, allowed, problems };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const released = lastReleased();
  const verdict = await compareSchemas(released, currentSdl(), version);
  for (const change of verdict.dangerous) console.error(`dangerous (allowed): ${change.message}`);
  if (verdict.allowed) for (const change of verdict.breaking) console.error(`breaking (allowed by ${version}): ${change.message}`);
  for (const problem of verdict.problems) console.error(problem);
  if (verdict.problems.length > 0) process.exit(1);
  console.error(`GraphQL schema of ${version}: no breaking change against the released ${released.version}`);
}
