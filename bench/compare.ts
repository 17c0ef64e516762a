/**
 * Two benchmark runs side by side, as a Markdown table: each row's figure in both, the second
 * over the first, and each run's ratio to its own ceiling (what the targets are about: a ratio
 * compares the service with a ceiling measured in the same run, on the same machine).
 *
 *   npx tsx bench/compare.ts bench/results/a.json bench/results/b.json --labels="Node 20,Node 26"
 */
import { readFileSync } from 'node:fs';

interface Row {
  readonly benchmark: string;
  readonly variant: string;
  readonly value: number;
  readonly unit: string;
  readonly broker?: string;
  readonly ratio?: number;
}
interface Run {
  readonly node?: string;
  /** Load averages (1, 5, 15 min) as /proc/loadavg gives them. */
  readonly loadBefore?: string;
  readonly loadAfter?: string;
  readonly rows: readonly Row[];
}

const args = process.argv.slice(2);
const files = args.filter((arg) => !arg.startsWith('--'));
const labels = (args.find((arg) => arg.startsWith('--labels='))?.slice('--labels='.length) ?? 'first,second').split(',');
if (files.length !== 2) {
  console.error('usage: npx tsx bench/compare.ts FIRST.json SECOND.json [--labels="first,second"]');
  process.exit(2);
}
const [first, second] = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as Run) as [Run, Run];
const keyOf = (row: Row) => `${row.benchmark}\u0000${row.broker ?? ''}\u0000${row.variant}`;
const later = new Map(second.rows.map((row) => [keyOf(row), row]));

const number = (value: number | undefined, unit = '') => {
  if (value === undefined || !Number.isFinite(value)) return '';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })}${unit === '' ? '' : ` ${unit}`}`;
};
const [a, b] = labels;
for (const [label, run] of [
  [a, first],
  [b, second],
] as const)
  console.log(`${label}: Node ${run.node ?? '?'}, load average ${run.loadBefore ?? '?'} before, ${run.loadAfter ?? '?'} after`);
console.log('');
console.log(`| benchmark | broker | row | ${a} | ${b} | ${b} ÷ ${a} | ratio to ceiling, ${a} | ratio to ceiling, ${b} |`);
console.log('|---|---|---|---:|---:|---:|---:|---:|');
for (const row of first.rows) {
  const other = later.get(keyOf(row));
  if (other === undefined) continue;
  const change = row.value !== 0 ? other.value / row.value : undefined;
  console.log(
    `| ${row.benchmark} | ${row.broker ?? ''} | ${row.variant} | ${number(row.value, row.unit)} | ${number(other.value, other.unit)} | ${number(change)} | ${number(row.ratio)} | ${number(other.ratio)} |`,
  );
}
