/**
 * Writes docs/runtime-licences.md: every package the image installs (`npm ci --omit=dev`), its
 * version and licence, read from package-lock.json: every package the root's production
 * dependencies reach there (`runtimeComponents`), with the licence the lock records for it. Not from `npm sbom --omit dev`: npm 11's leaves some
 * production packages out (graphql, ws, jose, pino and dataloader among them, found by comparing
 * with the image's node_modules). A licence outside the accepted list fails, so a new dependency's
 * licence is a decision, not an accident.
 *
 * Usage: `npx tsx scripts/runtime-licences.ts` to write it; `--check` (scripts/test.sh) exits 1 when
 * the file is stale or a licence is not accepted.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const OUT = 'docs/runtime-licences.md';
/** Permissive licences the project ships with; anything else needs a look first. */
export const ACCEPTED = new Set(['MIT', 'Apache-2.0', 'ISC', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD', 'BlueOak-1.0.0', 'MIT-0']);

/** One component of a CycloneDX SBOM, as npm writes it. */
interface Component {
  readonly name: string;
  readonly version: string;
  readonly group?: string;
  readonly licenses?: ReadonlyArray<{ license?: { id?: string; name?: string }; expression?: string }>;
}

/** What package-lock.json records of an installed package. */
interface LockEntry {
  readonly version?: string;
  readonly license?: string;
  readonly link?: boolean;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
}

/** package-lock.json: its root (`""`) and every installed package by path. */
interface Lock {
  readonly packages: Readonly<Record<string, LockEntry>>;
}

/**
 * The packages `npm ci --omit=dev` installs from `lock` in the image, as components: those the
 * root's production dependencies reach, through dependencies, optional dependencies and the peers
 * the lock holds, found where Node would (the nearest `node_modules` up the path). Not every entry
 * the lock leaves unmarked `dev`: the client library's workspace, which the image does not hold,
 * marks its optional peers (Apollo Client) `devOptional`, as are some the service does install.
 */
export function runtimeComponents(lock: Lock): Component[] {
  const reached = new Set<string>();
  const visit = (from: string, names: Iterable<string>) => {
    for (const name of names) {
      const path = resolveIn(lock, from, name);
      if (path === undefined || reached.has(path)) continue;
      reached.add(path);
      const entry = lock.packages[path]!;
      visit(path, [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.optionalDependencies ?? {}), ...Object.keys(entry.peerDependencies ?? {})]);
    }
  };
  const root = lock.packages[''] ?? {};
  visit('', [...Object.keys(root.dependencies ?? {}), ...Object.keys(root.optionalDependencies ?? {})]);
  return [...reached]
    .filter((path) => lock.packages[path]!.link !== true)
    .sort()
    .map((path) => {
      const entry = lock.packages[path]!;
      return {
        name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
        version: entry.version ?? 'unknown',
        ...(entry.license === undefined ? {} : { licenses: [{ expression: entry.license }] }),
      };
    });
}

/** Where Node finds `name` from the package at `from`: its own node_modules, then each one up. */
function resolveIn(lock: Lock, from: string, name: string): string | undefined {
  for (let base = from; ; base = base.slice(0, Math.max(0, base.lastIndexOf('/node_modules/')))) {
    const path = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (lock.packages[path] !== undefined) return path;
    if (base === '') return undefined;
  }
}

/** The licence a component declares (an SPDX id or expression), or `UNKNOWN`. */
export function licenceOf(component: Component): string {
  const named = (component.licenses ?? []).map((l) => l.expression ?? l.license?.id ?? l.license?.name ?? '').filter((l) => l !== '');
  return named.length === 0 ? 'UNKNOWN' : named.join(' AND ');
}

/**
 * Whether `licence` (an id, or an SPDX expression of ids with `OR` and `AND`, in parentheses or
 * not) lets the project ship the package: one of its choices whose every licence is accepted.
 */
export function accepted(licence: string): boolean {
  const choices = licence.replace(/[()]/g, '').split(/\s+OR\s+/);
  return choices.some((choice) => choice.split(/\s+AND\s+/).every((id) => ACCEPTED.has(id.trim())));
}

/** The Markdown document for `components`. */
export function render(components: readonly Component[]): string {
  const rows = components
    .map((c) => ({ name: c.group ? `${c.group}/${c.name}` : c.name, version: c.version, licence: licenceOf(c) }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.licence, (counts.get(row.licence) ?? 0) + 1);
  return [
    '# Runtime dependencies and their licences',
    '',
    'Generated by `npx tsx scripts/runtime-licences.ts` from package-lock.json (every package not marked `dev`):',
    'the packages the image installs (`npm ci --omit=dev`). `scripts/test.sh` fails when it',
    'is stale or a licence is outside the accepted list (in the script). The full SBOM of a built image is',
    'written by scripts/build-image.sh (docs/operations.md, "The image").',
    '',
    `${rows.length} packages: ${[...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([l, n]) => `${l} ${n}`)
      .join(', ')}.`,
    '',
    '| Package | Version | Licence |',
    '|---|---|---|',
    ...rows.map((r) => `| ${r.name} | ${r.version} | ${r.licence} |`),
    '',
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const sbom = { components: runtimeComponents(JSON.parse(readFileSync('package-lock.json', 'utf8')) as Lock) };
  const refused = sbom.components.filter((c) => !accepted(licenceOf(c)));
  for (const c of refused) console.error(`${c.name}@${c.version}: licence ${licenceOf(c)} is not accepted (scripts/runtime-licences.ts, ACCEPTED)`);
  const text = render(sbom.components);
  if (process.argv.includes('--check')) {
    const current = existsSync(OUT) ? readFileSync(OUT, 'utf8') : '';
    if (current !== text) console.error(`${OUT} is stale: run 'npx tsx scripts/runtime-licences.ts' and commit the result`);
    process.exit(current === text && refused.length === 0 ? 0 : 1);
  }
  writeFileSync(OUT, text);
  process.exit(refused.length === 0 ? 0 : 1);
}
