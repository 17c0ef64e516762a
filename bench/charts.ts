/**
 * The charts of a benchmark run (`lib/charts-from-rows.ts`): written by `bench/run.ts` at the end
 * of every run, and redrawn from a run's figures without measuring again:
 *   npx tsx bench/charts.ts bench/results/bench-<time>.json [--charts=bench/charts]
 * (without `--charts`, beside the figures in `bench/results/charts-<name of the JSON file>/`).
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Row } from './ingest.js';
import { writeCharts } from './lib/charts-from-rows.js';

/** The folder `--charts=DIR` names, if given. */
export function chartsOption(argv: readonly string[]): string | undefined {
  return argv.find((a) => a.startsWith('--charts='))?.slice('--charts='.length);
}

/** Writes a run's charts into `dir` and says where. */
export async function writeRunCharts(rows: readonly Row[], dir: string): Promise<void> {
  const files = await writeCharts(rows, dir);
  console.log(files.length === 0 ? 'no rows to chart' : `${files.length} charts written to ${dir}`);
}

// Run as a script: redraw the charts of the results file given.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv.slice(2).find((a) => !a.startsWith('--'));
  if (file === undefined) {
    console.error('usage: tsx bench/charts.ts <bench/results/*.json> [--charts=DIR]');
    process.exit(2);
  }
  const { rows } = JSON.parse(readFileSync(file, 'utf8')) as { rows: Row[] };
  await writeRunCharts(rows, chartsOption(process.argv) ?? join(dirname(file), `charts-${basename(file, '.json')}`));
}
