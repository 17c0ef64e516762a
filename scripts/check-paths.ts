/**
 * Every file a comment or a document names exists: a path under one of the repo's folders
 * (`src/log/redis-tail.ts`, `docs/kafka.md`, a module specifier such as `src/telemetry/metrics`), a relative
 * Markdown link, or a bare file name (`redis-tail.ts`, which some file of the repo must bear). Words
 * that name files the code no longer has mislead a reader more than no words. Run by
 * `scripts/test.sh`; prints each stale mention as `file:line: path` and exits 1.
 *
 * Usage: `npx tsx scripts/check-paths.ts`
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';

/** Files whose words are checked: the code, the scripts and the documents the repo keeps. */
const CHECKED = /\.(ts|tsx|js|cjs|mjs|md|sh|yml|yaml|py)$|(^|\/)(Dockerfile|run)$/;
/** Files not written by hand, records of a past run that name what was there then, and the test of this check (its made-up names). */
const SKIPPED = /(^|\/)(package-lock\.json|generated\/|gql\/)|^bench\/reference\/|^test\/tools\/check-paths\.test\.ts$/;
/** The repo's own folders: a word that starts with one of them names a path. */
const ROOTED = /(?<![\w./@-])((?:src|test|docs|bench|scripts|tools|web|deploy|schema|\.ci)\/[\w./-]*[\w])/g;
/** A relative Markdown link's target. */
const LINK = /\]\((?!https?:|mailto:|#)([^)\s#]+)/g;
/** A bare file name with an extension the repo's own files have. */
const BARE = /(?<![\w./@*-])(\w[\w-]*\.(?:ts|tsx|md|sh|cjs|yml))(?![\w/-])/g;
/** Where ignored outputs go: paths there exist after a run, not in a clone. */
const OUTPUTS = /^(bench\/results|\.cache|dist|node_modules|coverage|test-results|web\/dist)(\/|$)/;

/** The mentions in `text` of `file` that name nothing in the repo. */
export function staleMentions(file: string, text: string, tracked: ReadonlySet<string>, names: ReadonlySet<string>): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    const reported = new Set<string>();
    const report = (path: string) => {
      if (!reported.has(path)) found.push(`${file}:${i + 1}: ${path}`);
      reported.add(path);
    };
    for (const match of line.matchAll(ROOTED)) {
      const path = match[1] as string;
      // A pattern's stem (`src/ingest/kafka-*`, a regex's `^src/log/redis-`) names every file it starts.
      const stem = /^[-*([|\\]/.test(line.charAt((match.index ?? 0) + path.length));
      const ok = OUTPUTS.test(path) || EXAMPLES.has(path) || (stem ? [...tracked].some((f) => f.startsWith(path)) : pathExists(path, file, tracked));
      if (!ok) report(path);
    }
    if (file.endsWith('.md')) for (const [, path] of line.matchAll(LINK)) if (!pathExists(path as string, file, tracked)) report(path as string);
    for (const [, name] of line.matchAll(BARE)) if (!names.has(name as string) && !isOutsideName(name as string)) report(name as string);
  });
  return found;
}

function pathExists(raw: string, from: string, tracked: ReadonlySet<string>): boolean {
  const path = raw.replace(/\.$/, '');
  if (OUTPUTS.test(path)) return true;
  const candidates = [path, normalize(join(dirname(from), path))];
  // A module specifier names its file without the extension, or by the compiled `.js`.
  const variants = (p: string) => [p, `${p}.ts`, `${p}.tsx`, p.replace(/\.js$/, '.ts'), p.replace(/\.js$/, '.tsx')];
  return candidates.some((p) => variants(p).some((v) => tracked.has(v) || existsSync(v)));
}

/** Names of files that are not the repo's: its dependencies', its tools', examples of other names. */
function isOutsideName(name: string): boolean {
  return OUTSIDE_NAMES.has(name) || /^(vite|vitest|codegen|tsconfig)\b/.test(name);
}

/** Files of dependencies and tools that documents name on purpose. */
const OUTSIDE_NAMES: ReadonlySet<string> = new Set(['prometheus.yml', 'kafka-consumer-groups.sh']);
/** Paths of a user's project in the documents' examples (docs/api.md's client codegen). */
const EXAMPLES: ReadonlySet<string> = new Set(['src/gql/persisted-documents.json']);

function main(): void {
  const tracked = new Set(execFileSync('git', ['ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean));
  const names = new Set([...tracked].map((f) => basename(f)));
  const stale = [...tracked]
    .filter((f) => CHECKED.test(f) && !SKIPPED.test(f) && existsSync(f))
    .flatMap((f) => staleMentions(f, readFileSync(f, 'utf8'), tracked, names));
  for (const line of stale) console.error(line);
  if (stale.length > 0) {
    console.error(`${stale.length} mention(s) of files that do not exist: fix the words or the path`);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
