/**
 * The charts of one benchmark run, drawn from its rows (as printed and written to
 * bench/results/*.json): one line chart per cost curve, from the rows that carry a `point`, and one
 * grouped bar chart of the service and the ceiling beside the common-stack peer, each as a multiple
 * of the peer's figure so that figures in different units share one axis.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Row } from '../ingest.js';
import { renderBarChart, renderLineChart, type Bar, type LinePoint } from './chart.js';

/** Where a row stands on a cost curve: the curve, the line within it, and its x. */
export interface CurvePoint {
  /** The curve's file name (kebab-case, without `.svg`). */
  readonly curve: string;
  readonly series: string;
  readonly x: number;
}

/** A row that is also a point of a cost curve (the row's `value` is its y). */
export interface CurveRow extends Row {
  readonly point: CurvePoint;
}

/** Titles of the known curves; a curve not listed here is drawn with its file name as its title. */
const CURVES: Record<string, { title: string; xTitle: string }> = {
  'query-p99-by-stored-messages': {
    title: 'test() with 100 messages: p99 at half the saturated rate, by messages stored',
    xTitle: 'messages stored (100 per test)',
  },
  'query-rate-by-stored-messages': {
    title: 'test() with 100 messages: requests/s at saturation, by messages stored',
    xTitle: 'messages stored (100 per test)',
  },
  'cpu-per-push-by-subscribers': { title: 'Fan-out: CPU per push, by subscribers of one test', xTitle: 'subscribers' },
  'ingest-rate-by-partitions': { title: 'Ingest: records/s, by partitions of the topic', xTitle: 'partitions' },
  'heap-per-message-by-stored-messages': { title: 'Memory store: heap per stored message, by messages stored', xTitle: 'messages stored' },
};

function isCurveRow(row: Row): row is CurveRow {
  return typeof (row as Partial<CurveRow>).point?.curve === 'string';
}

/** Units where less is better (time per push, latency): their bars are inverted so that higher is better everywhere. */
const LOWER_IS_BETTER = new Set(['µs', 'ms']);

/**
 * The bars of the peer chart, as speed relative to the common-stack peer (peer = 1, higher is
 * better): every row with a `ratioToPeer` but p50s (the p99 beside them says more), beside its
 * ceiling where the row has a ratio to one. The peer is the baseline because every comparison with
 * it has a peer figure, while end-to-end latency has no ceiling.
 */
export function peerBars(rows: readonly Row[]): Bar[] {
  const bars: Bar[] = [];
  for (const service of rows.filter((r) => r.ratioToPeer !== undefined && r.ratioToPeer > 0 && !/\bp50$/.test(r.variant))) {
    const speed = (r: number) => (LOWER_IS_BETTER.has(service.unit) ? 1 / r : r);
    const group = `${service.benchmark}${service.broker === undefined ? '' : ` (${service.broker})`}: ${shortVariant(service)}`;
    bars.push({ group, bar: 'common-stack peer', value: 1 }, { group, bar: 'service', value: speed(service.ratioToPeer as number) });
    // The ceiling's figure over the peer's is ratioToPeer / ratio (service / peer over service / ceiling).
    if (service.ratio !== undefined && service.ratio > 0) bars.push({ group, bar: 'ceiling', value: speed((service.ratioToPeer as number) / service.ratio) });
  }
  return bars;
}

/** A variant short enough for an axis label: its service part without the word, and the unit. */
function shortVariant(row: Row): string {
  const text = row.variant
    .replace(/ \(ratio: [^)]*\)/, '')
    .replace(/\bservice\b ?/, '')
    .replace(/, fetch wait \d+ ms/, '')
    .trim();
  return `${text.length > 60 ? `${text.slice(0, 59)}…` : text} [${row.unit}]`;
}
/** Writes the run's charts into `dir` (created if needed) and returns the files written. */
export async function writeCharts(rows: readonly Row[], dir: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const curves = new Map<string, { unit: string; points: LinePoint[] }>();
  for (const row of rows.filter(isCurveRow)) {
    const curve = curves.get(row.point.curve) ?? { unit: row.unit, points: [] };
    curve.points.push({ x: row.point.x, y: row.value, series: row.point.series });
    curves.set(row.point.curve, curve);
  }
  for (const [name, { unit, points }] of curves) {
    const known = CURVES[name] ?? { title: name, xTitle: 'x' };
    const file = join(dir, `${name}.svg`);
    writeFileSync(file, await renderLineChart({ title: known.title, xTitle: known.xTitle, yTitle: unit, points }));
    written.push(file);
  }
  const bars = peerBars(rows);
  if (bars.length > 0) {
    const file = join(dir, 'service-peer-ceiling.svg');
    const title = 'Service and ceiling against the common-stack peer in the same run (peer = 1, higher is better)';
    const yTitle = 'times the peer (rates: ÷ peer; CPU and latency: peer ÷)';
    writeFileSync(
      file,
      await renderBarChart({ title, yTitle, bars, order: ['common-stack peer', 'service', 'ceiling'], rule: { value: 1, label: 'common-stack peer' } }),
    );
    written.push(file);
  }
  return written;
}
