/**
 * The runtime dependencies are complete: every bare import of the compiled service (`dist/**\/*.js`)
 * names a package installed in the application's `node_modules` as `npm ci --omit=dev` leaves it, so
 * a runtime import of a dev dependency (present in a development checkout, absent from the image) is
 * caught before a replica fails to start. test/deploy/image.test.ts runs it over the built image's own
 * `/app`; prints each missing import as `file: specifier` and exits 1.
 *
 * Usage: `npx tsx scripts/check-runtime-deps.ts <app dir>` (the folder holding dist/ and node_modules/)
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/** One bare import that the installed packages do not satisfy. */
export interface MissingImport {
  /** The importing file, relative to the application folder. */
  readonly file: string;
  readonly specifier: string;
}

/** Static imports and re-exports (`from '…'`), side-effect imports and `import('…')` with a literal. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s*)(['"])([^'"\n]+)\1/gm;

/** The bare specifiers `source` imports (neither relative, absolute, nor a Node.js built-in). */
export function bareImports(source: string): string[] {
  const found = new Set<string>();
  for (const match of source.matchAll(IMPORT)) {
    const specifier = match[2] as string;
    if (/^(\.|\/|node:|data:|file:)/.test(specifier) || builtinModules.includes(specifier)) continue;
    found.add(specifier);
  }
  return [...found];
}

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return jsFiles(path);
    return /\.(m|c)?js$/.test(entry.name) ? [path] : [];
  });
}

/** Every bare import under `appDir`/dist (but dist/web/, the browser bundles) whose package is not in `appDir`/node_modules. */
export function missingRuntimeImports(appDir: string): MissingImport[] {
  const dist = join(appDir, 'dist');
  if (!existsSync(dist)) throw new Error(`${dist} does not exist: nothing to check`);
  const missing: MissingImport[] = [];
  // dist/web/ holds the browser pages' bundles (vite), which Node never imports.
  const files = jsFiles(dist).filter((file) => !relative(dist, file).startsWith(`web/`));
  for (const file of files) {
    for (const specifier of bareImports(readFileSync(file, 'utf8'))) {
      if (!existsSync(join(appDir, 'node_modules', packageName(specifier), 'package.json'))) {
        missing.push({ file: relative(appDir, file), specifier });
      }
    }
  }
  return missing;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const appDir = process.argv[2];
  if (appDir === undefined) {
    console.error('usage: npx tsx scripts/check-runtime-deps.ts <app dir>');
    process.exit(2);
  }
  const missing = missingRuntimeImports(appDir);
  for (const { file, specifier } of missing) console.error(`${file}: ${specifier}`);
  process.exit(missing.length === 0 ? 0 : 1);
}
