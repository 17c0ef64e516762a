/**
 * The benchmark workers as the service is deployed: compiled by `tsc` and run by `node` alone.
 *
 * Run through `tsx` (as they were until 2026-11-28), every closure of the service and of the
 * ceilings and peers was wrapped in esbuild's `__name` helper (tsx compiles with `keepNames`),
 * which defines a `name` on each function it creates and so turns it into a dictionary-mode object
 * with a property table of its own, about 256 bytes, and a call more per closure made. The
 * service's image runs `tsc`'s output (`node dist/app/main.js`), which has none of that: measured
 * through `tsx`, an idle followed test cost the service 24.6 KB of RSS against 14.6 KB compiled,
 * an idle subscribed WebSocket 44.9 KB against 35.0–35.7 KB (bench/README.md, "Workers as deployed").
 *
 * The build is made once per checkout and process, into `<checkout>/.cache/bench-build/`, from
 * `src/` and `bench/` (and what they import), laid out as in the checkout so that the files the
 * service reads next to its code (`schema/`, `dist/web/`) are found through two links.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const built = new Map<string, string>();

/**
 * Compiles the workers of `checkout` (once per process) and returns the directory that holds them
 * (`bench/workers/<name>.js` under it). Throws with the compiler's output when it fails.
 */
export function workerBuild(checkout: string): string {
  const known = built.get(checkout);
  if (known !== undefined) return known;
  const cache = join(checkout, '.cache');
  const out = join(cache, 'bench-build');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  // A tsconfig of its own beside the build, so that any checkout (an older commit too) builds the same way.
  const config = join(cache, 'bench-build.tsconfig.json');
  writeFileSync(
    config,
    JSON.stringify({
      extends: '../tsconfig.json',
      compilerOptions: { rootDir: '..', outDir: 'bench-build', noEmit: false, sourceMap: false, declaration: false, incremental: false },
      include: ['../src', '../bench'],
      exclude: ['../bench/scratch-*.ts'],
    }),
  );
  try {
    execFileSync(process.execPath, [join(checkout, 'node_modules/typescript/bin/tsc'), '-p', config], { cwd: checkout, stdio: 'pipe' });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? '';
    throw new Error(`the benchmark workers of ${checkout} do not compile:\n${output.slice(0, 4000)}`, { cause: error });
  }
  symlinkSync(join(checkout, 'schema'), join(out, 'schema'));
  symlinkSync(join(checkout, 'dist'), join(out, 'dist'));
  built.set(checkout, out);
  return out;
}
